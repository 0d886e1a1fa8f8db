import Foundation
import Synchronization
import Testing
import PerimeterTestSupport
@testable import PerimeterCLI
#if canImport(Glibc)
import Glibc
#endif

/// `perimeter demo --serve`, in process: a real server on a free port, the drive at the largest time
/// scale, `--exit-after-drive` so it ends by itself.
@Suite("Live demo")
struct LiveDemoTests {
    /// What the hook saw over the socket while the demo ran.
    final class Observed: Sendable {
        let state = Mutex<(port: UInt16?, page: HTTPAnswer?, fences: HTTPAnswer?, failure: String?)>((nil, nil, nil, nil))
    }

    @Test("--serve: the printed URL answers while it runs, the events are the offline demo's, then it exits")
    func liveDemoMatchesOffline() async throws {
        let dir = try temporaryDirectory()
        let database = dir.appendingPathComponent("demo.sqlite").path
        let capture = Capture()
        let observed = Observed()
        let hooks = DemoServer.Hooks { port in
            // Runs after the URL was printed, before the drive starts: the server must answer now.
            do {
                let page = try HTTPAnswer.get("/", port: port)
                let fences = try HTTPAnswer.get("/v1/fences", port: port)
                observed.state.withLock { $0 = (port, page, fences, nil) }
            } catch {
                observed.state.withLock { $0 = (port, nil, nil, "\(error)") }
            }
        }
        let arguments = ["--serve", "--port", "0", "--db", database, "--time-scale", "10000", "--exit-after-drive",
                         "--format", "ndjson"]
        let status = await runOnOwnThread { Self.demo(arguments, capture: capture, hooks: hooks) }
        #expect(status == 0, "\(capture.error)")

        // The URL was printed (on standard error: standard output holds only NDJSON events) and answered.
        let seen = observed.state.withLock { $0 }
        let port = try #require(seen.port)
        #expect(seen.failure == nil)
        #expect(capture.error.contains("Map: http://127.0.0.1:\(port)/"), "\(capture.error)")
        #expect(port != 0)
        let page = try #require(seen.page)
        #expect(page.status == 200)
        #expect(page.text.lowercased().contains("<html"))
        let fences = try #require(seen.fences)
        #expect(fences.status == 200)
        let collection = try JSONSerialization.jsonObject(with: Data(fences.body)) as? [String: Any]
        let ids = (collection?["features"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
        let demoIDs = try DemoScenario(speed: DemoData.speed).fences.map(\.id.rawValue)
        #expect(ids.sorted() == demoIDs.sorted() && ids.count == 7, "\(ids)")

        // The same events as the offline demo: kinds, fences, devices, order; times shifted by one constant.
        let offline = perimeter("demo", "--format", "ndjson")
        #expect(offline.status == 0)
        let live = try eventKeys(capture.output), expected = try eventKeys(offline.output)
        #expect(live.count == expected.count && live.count > 10, "\(live.count) live, \(expected.count) offline")
        #expect(live.map { Array($0[0..<3]) } == expected.map { Array($0[0..<3]) })
        let shifts = zip(live, expected).compactMap { pair -> Double? in
            guard let a = RFC3339Parse.date(pair.0[3]), let b = RFC3339Parse.date(pair.1[3]) else { return nil }
            return a.timeIntervalSince(b)
        }
        #expect(shifts.count == live.count)
        if let first = shifts.first {
            #expect(shifts.allSatisfy { abs($0 - first) <= 0.002 }, "times are not shifted by one constant: \(shifts)")
        }
        #expect(capture.error.contains("The same events as the offline demo"), "\(capture.error)")
        #expect(FileManager.default.fileExists(atPath: database), "a given --db is kept")

        // The database now holds the van: a second run on it would not start at the depot, so it is refused.
        let again = Capture()
        let refused = await runOnOwnThread { Self.demo(arguments, capture: again, hooks: DemoServer.Hooks()) }
        #expect(refused == 64)
        #expect(again.error.contains("already holds updates of van-7"), "\(again.error)")
    }

    @Test("--serve in text: the offline demo's lines apart from the clock, a summary, the temporary database removed")
    func liveDemoText() async throws {
        let capture = Capture()
        let status = await runOnOwnThread {
            Self.demo(["--serve", "--port", "0", "--time-scale", "10000", "--exit-after-drive"], capture: capture,
                      hooks: DemoServer.Hooks())
        }
        #expect(status == 0, "\(capture.error)")
        let lines = capture.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first?.hasPrefix("Perimeter demo, live: van-7 drives") == true)
        let offline = perimeter("demo").output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        // Event lines: the block between the first two empty lines (after the header, before the counts).
        func events(_ lines: [String]) -> [String] {
            lines.drop { !$0.isEmpty }.dropFirst().prefix { !$0.isEmpty }
                .map { $0.replacingOccurrences(of: #"\d\d:\d\d:\d\d"#, with: "hh:mm:ss", options: .regularExpression) }
        }
        #expect(events(lines) == events(offline))
        #expect(events(lines).count > 10)
        let counts = try #require(offline.first { $0.hasSuffix(" exits.") })
        #expect(lines.contains(counts))
        #expect(lines.contains { $0.hasPrefix("The same events as the offline demo") })
        #expect(lines.contains("Stopping the server (--exit-after-drive)."))
        // The temporary database named in the header is gone.
        let mapLine = try #require(lines.first { $0.hasPrefix("Map: http://127.0.0.1:") })
        let path = try #require(mapLine.range(of: "(database ").map { String(mapLine[$0.upperBound...].prefix { $0 != "," }) })
        #expect(path.hasSuffix("demo.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test("the real executable: after the drive its last line says where the map is served and how to stop; SIGINT stops it")
    func servesOnUntilInterrupted() async throws {
        let executable = try #require(perimeterExecutable(), "perimeter executable not built next to the tests")
        let database = try temporaryDirectory().appendingPathComponent("demo.sqlite").path
        let process = Process()
        process.executableURL = executable
        process.arguments = ["demo", "--serve", "--port", "0", "--db", database, "--time-scale", "10000"]
        defer { if process.isRunning { process.terminate() } }
        let text = try await outputUntilInterrupted(process, after: "Ctrl-C to stop.\n")
        #expect(process.terminationStatus == 0, "\(text)")
        let lines = text.split(separator: "\n").map(String.init)
        let port = try #require(lines.first { $0.hasPrefix("Map: http://127.0.0.1:") }.flatMap { line in
            line.dropFirst("Map: http://127.0.0.1:".count).split(separator: "/").first.map(String.init) })
        let serving = try #require(lines.firstIndex { $0.hasPrefix("Serving the map at") }, "\(text)")
        #expect(lines[serving] == "Serving the map at http://127.0.0.1:\(port)/; Ctrl-C to stop.")
        #expect(lines[(serving + 1)...] == ["Stopping the server."], "nothing after the serving line but the stop")
    }

    @Test("server options need --serve; --svg and --export do not go with it; bad values are refused", arguments: [
        (["demo", "--port", "0"], "--port needs --serve"),
        (["demo", "--exit-after-drive"], "--exit-after-drive needs --serve"),
        (["demo", "--time-scale", "10"], "--time-scale needs --serve"),
        (["demo", "--db", "x.sqlite"], "--db needs --serve"),
        (["demo", "--serve", "--svg", "x.svg"], "--svg works only without --serve"),
        (["demo", "--serve", "--export", "dir"], "--export works only without --serve"),
        (["demo", "--serve", "--time-scale", "20000"], "--time-scale must be a number from"),
        (["demo", "--serve", "--port", "80.5"], "--port must be a whole number"),
        (["demo", "--serve", "--port", "70000"], "--port must be a number from 0 to 65535"),
    ])
    func usage(arguments: [String], message: String) {
        let run = perimeter(arguments)
        #expect(run.status == 64)
        #expect(run.error.contains(message), "\(run.error)")
        #expect(run.output.isEmpty)
    }

    /// Runs `perimeter demo ARGUMENTS` with `hooks`, as `Perimeter.main` would (errors become statuses).
    static func demo(_ arguments: [String], capture: Capture, hooks: DemoServer.Hooks) -> Int32 {
        let console = capture.console
        do {
            return try DemoCommand.run(arguments, console: console, hooks: hooks)
        } catch {
            return Perimeter.exitStatus(reporting: error, on: console)
        }
    }
}

/// Runs blocking `body` on a thread of its own, so that the two threads of the cooperative pool stay
/// free for the server's simulation task while the test waits.
func runOnOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// RFC 3339 times as the NDJSON output writes them (UTC, optional fraction).
enum RFC3339Parse {
    static func date(_ text: String) -> Date? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)
    }
}

/// One HTTP/1.1 answer read over a loopback socket (`Connection: close`, read to the end).
struct HTTPAnswer: Sendable {
    var status: Int
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }

    enum Failure: Error { case connect, write, timeout, malformed(String) }

    /// `GET path` on 127.0.0.1:`port`; gives up after 10 s without data.
    static func get(_ path: String, port: UInt16) throws -> HTTPAnswer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure.connect }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == request.count else { throw Failure.write }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            if n < 0 { throw Failure.timeout }
            bytes += chunk[0..<n]
        }
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw Failure.malformed(String(decoding: bytes.prefix(200), as: UTF8.self))
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let statusLine = head.split(separator: "\r\n").first.map(String.init) ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure.malformed(statusLine) }
        var body = Array(bytes[(end + 4)...])
        if head.lowercased().contains("transfer-encoding: chunked") { body = try dechunk(body) }
        return HTTPAnswer(status: status, body: body)
    }

    /// Decodes a chunked body (sizes in hex, each line ended by CRLF, a zero-size chunk last).
    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            guard let lineEnd = (index..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self).split(separator: ";")[0], radix: 16) else {
                throw Failure.malformed("bad chunk size")
            }
            if size == 0 { return out }
            let start = lineEnd + 2
            guard start + size <= bytes.count else { throw Failure.malformed("short chunk") }
            out += bytes[start..<start + size]
            index = start + size + 2
        }
        return out
    }
}
