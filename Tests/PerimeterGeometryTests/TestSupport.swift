import Foundation
import PerimeterGeometry

/// A tiny seeded generator (SplitMix64) so random property tests are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Shorthand: a coordinate from x = longitude, y = latitude.
func xy(_ x: Double, _ y: Double) -> Coordinate { Coordinate(latitude: y, longitude: x) }

/// A closed ring from x/y pairs (closing it if needed).
func ring(_ points: [(Double, Double)]) -> [Coordinate] {
    var r = points.map { xy($0.0, $0.1) }
    if let first = r.first, r.last != first { r.append(first) }
    return r
}

/// Errors a test helper can raise, with what went wrong where.
struct TestInputError: Error, CustomStringConvertible {
    var description: String
}

/// Runs `/bin/gzip -dc` on a file and returns the decompressed bytes.
func gunzip(_ url: URL) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/gzip")
    process.arguments = ["-dc", url.path]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw TestInputError(description: "gzip -dc \(url.path) exited with \(process.terminationStatus)")
    }
    return data
}
