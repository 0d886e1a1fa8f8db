import Foundation
import PerimeterGeometry

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
