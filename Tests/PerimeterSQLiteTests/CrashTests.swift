import Foundation
import PerimeterSQLite
import PerimeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Streams updates into a real child process, kills it with SIGKILL at random moments, restarts it, and
/// checks that the event log equals that of an uninterrupted run: nothing lost, nothing doubled.
@Suite("Crash test (kill -9)")
struct CrashTests {
    /// The crash driver, built next to the test bundle.
    static var driver: URL? {
        BuildProducts.locate("perimeter-service-crash") { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Writes circle fences and a time-ordered stream of random walks.
    static func writeScenario(in folder: TemporaryFolder, seed: UInt64, updates: Int) throws {
        var rng = SplitMix64(seed: seed)
        var features: [String] = []
        for i in 0..<10 {
            let lat = 48 + Double.random(in: 0...0.03, using: &rng), lon = 2 + Double.random(in: 0...0.03, using: &rng)
            let radius = Double.random(in: 300...1200, using: &rng)
            let dwell = i % 3 == 0 ? "" : #","perimeter:dwell":\#(Int.random(in: 10...120, using: &rng))"#
            features.append(#"{"type":"Feature","id":"f\#(i)","geometry":{"type":"Point","coordinates":[\#(lon),\#(lat)]},"properties":{"perimeter:radius":\#(radius)\#(dwell)}}"#)
        }
        try #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
            .write(toFile: folder.path("fences.geojson"), atomically: true, encoding: .utf8)
        var positions = (0..<5).map { _ in (48 + Double.random(in: 0...0.03, using: &rng), 2 + Double.random(in: 0...0.03, using: &rng)) }
        var time = 1_750_000_000.0
        var lines: [String] = []
        for _ in 0..<updates {
            let d = Int.random(in: 0..<5, using: &rng)
            positions[d].0 += Double.random(in: -0.0015...0.0015, using: &rng)
            positions[d].1 += Double.random(in: -0.0015...0.0015, using: &rng)
            time += Double(Int.random(in: 0...6, using: &rng))
            lines.append("dev\(d),\(time),\(positions[d].0),\(positions[d].1)")
        }
        try lines.joined(separator: "\n").write(toFile: folder.path("updates.csv"), atomically: true, encoding: .utf8)
    }

    /// Runs the driver to the end, or — with `killAt` — kills it with SIGKILL as soon as it reports
    /// having handed `killAt` updates to the service (it is then somewhere in the next batches: the
    /// kill lands mid-stream whatever the machine's speed). Returns `nil` output when killed; throws
    /// when the driver fails. It blocks until the driver ends: call it through ``offThePool(_:)``.
    static func run(_ driver: URL, folder: TemporaryFolder, database: String, options: Bool = false,
                    exclusive: Bool = false, killAt: Int? = nil) throws -> String? {
        let process = Process()
        process.executableURL = driver
        process.arguments = [folder.path(database), folder.path("fences.geojson"), folder.path("updates.csv"),
                             "--batch", "3", "--dwell", "40"] + (options ? ["--options"] : []) + (exclusive ? ["--exclusive"] : [])
            + (killAt != nil ? ["--progress"] : [])
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var text = Data()
        if let killAt {
            var line = Data()
            reading: while true {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                for byte in chunk {
                    if byte != UInt8(ascii: "\n") { line.append(byte); continue }
                    let words = String(decoding: line, as: UTF8.self).split(separator: " ")
                    line.removeAll()
                    if words.count == 2, words[0] == "at", let n = Int(words[1]), n >= killAt {
                        kill(process.processIdentifier, SIGKILL)
                        break reading
                    }
                }
            }
        }
        text.append(output.fileHandleForReading.readDataToEndOfFile())
        let problems = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal { return nil }
        guard process.terminationStatus == 0 else {
            throw DriverFailure(description: "driver failed with status \(process.terminationStatus): \(problems)")
        }
        return String(decoding: text, as: UTF8.self)
    }

    struct DriverFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The event ids of a driver's output, in log order.
    static func eventIDs(_ output: String) -> [String] {
        output.split(separator: "\n").drop { $0 != "log" }.dropFirst().map { String($0.split(separator: "\t")[1]) }
    }

    @Test("kill -9 at random points, restart, finish: the event log equals an uninterrupted run",
          arguments: [(7 as UInt64, false, false), (8, true, false), (9, false, true)])
    func killAndResume(seed: UInt64, options: Bool, exclusive: Bool) async throws {
        guard let driver = Self.driver else {
            Issue.record("perimeter-service-crash was not found next to the test bundle (\(Bundle.main.bundleURL.path))")
            return
        }
        let folder = TemporaryFolder()
        let count = options ? 6000 : 12000  // the options run only needs to show that their state survives
        try Self.writeScenario(in: folder, seed: seed, updates: count)
        let reference = try #require(try await offThePool {
            try Self.run(driver, folder: folder, database: "reference.sqlite", options: options)
        })
        let expected = Self.eventIDs(reference)
        #expect(expected.count > 50)
        #expect(Set(expected).count == expected.count)

        var rng = SplitMix64(seed: seed)
        var killed = 0
        var progress: [UInt64] = []
        var reached = 0
        for _ in 0..<6 {
            // Each run is killed after streaming 2–14 % of the updates past where it resumed, so the six
            // together cannot finish the stream.
            reached = min(count - 1, reached + Int(Double(count) * Double.random(in: 0.02...0.14, using: &rng)))
            let target = reached
            if try await offThePool({
                try Self.run(driver, folder: folder, database: "crashed.sqlite", options: options, exclusive: exclusive,
                             killAt: target)
            }) == nil {
                killed += 1
            }
            if FileManager.default.fileExists(atPath: folder.path("crashed.sqlite")) {
                let store = try SQLiteGeofencingStore(path: folder.path("crashed.sqlite"))
                progress.append(try store.load().processedUpdates)
                store.close()
                reached = Int(progress.last ?? 0)
            }
        }
        #expect(killed == 6, "every run should have been killed mid-stream (killed \(killed) of 6)")
        let midway = Set(progress.filter { $0 > 0 && $0 < UInt64(count) })
        #expect(midway.count >= 3, "kills should land at different points of the stream: \(progress)")
        let final = try #require(try await offThePool {
            try Self.run(driver, folder: folder, database: "crashed.sqlite", options: options, exclusive: exclusive)
        })
        let actual = Self.eventIDs(final)
        #expect(actual.count == expected.count)
        #expect(actual == expected)
    }
}
