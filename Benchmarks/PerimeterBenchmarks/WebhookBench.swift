import Foundation
import PerimeterServer
import PerimeterWebhooks
#if canImport(Glibc)
import Glibc
#endif

/// Webhook deliveries per second to one receiver on loopback: scripts/webhook-receiver.py (Python's
/// threaded `http.server`, HTTP/1.1 keep-alive, wrapped in `ssl` for https) answers every POST with 204.
///
/// Each delivery is what a webhook worker sends: a 0.5 KiB CloudEvent-sized body with the same headers,
/// signed afresh (HMAC-SHA256), POSTed through ``WebhookTransport/post(to:headers:body:)`` with the SSRF
/// guard's resolution, one at a time, the status awaited before the next. Three clients, same run,
/// same receiver: the yardstick is Perimeter's client before libcurl (``ConnectionPerRequestClient``,
/// http only, a new connection per delivery); then ``WebhookHTTPClient`` (libcurl) over http and over
/// https, both keeping the connection alive. Every delivery must be answered 204 or the run fails.
/// The receiver runs on another core than the benchmark when there is one, and it is the slower side,
/// so the rates say as much about Python as about the client; the client's own cost is the second
/// figure of each client: the benchmark process's CPU time (user + system, `getrusage`) per delivery,
/// which a busy machine disturbs far less than wall-clock rates.
public struct WebhookBench: Sendable {
    /// The report section.
    public static let section = "Webhook deliveries to one receiver (loopback, Python receiver)"

    /// How long each measured run lasts, in seconds.
    public var duration: Double
    /// Runs per client (median reported).
    public var runs: Int
    /// Where certificates go.
    public var workDirectory: URL
    /// The repository's root (for scripts/webhook-receiver.py).
    public var repositoryRoot: URL

    /// The full run (3 runs of 3 s per client) or the smoke run (1 run of 0.5 s).
    public init(smoke: Bool, workDirectory: URL, repositoryRoot: URL) {
        duration = smoke ? 0.5 : 3
        runs = smoke ? 1 : 3
        self.workDirectory = workDirectory
        self.repositoryRoot = repositoryRoot
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Measures the three clients; adds figures, or a failed check.
    public func run(into report: inout Report) {
        let name = "webhook deliveries: every POST answered 204 (http before/after, https after)"
        do {
            let folder = workDirectory.appendingPathComponent("webhook-tls")
            let ca = try Self.makeCertificates(in: folder)
            let plain = try ReceiverProcess(script: script, arguments: [])
            defer { plain.stop() }
            let secure = try ReceiverProcess(script: script, arguments: [
                "--cert", folder.appendingPathComponent("server.pem").path,
                "--key", folder.appendingPathComponent("server.key").path,
            ])
            defer { secure.stop() }
            let policy = TargetAddressPolicy(allowPrivateTargets: true)
            let before = ConnectionPerRequestClient(policy: policy)
            let after = try WebhookHTTPClient(policy: policy, tls: WebhookTLS(trustedCAFile: ca))
            let cases: [(String, any WebhookTransport, String)] = [
                ("http, one connection per delivery (before: the hand-written client)", before, "http://127.0.0.1:\(plain.port)/hook"),
                ("http, keep-alive (libcurl)", after, "http://127.0.0.1:\(plain.port)/hook"),
                ("https, keep-alive (libcurl, TLS verified)", after, "https://127.0.0.1:\(secure.port)/hook"),
            ]
            var rates: [Double] = []
            var cpu: [Double] = []
            var counts: [Int] = []
            for (label, client, url) in cases {
                let target = try WebhookTarget(url: url)
                _ = try deliver(client, target, for: 0.05)   // connect, handshake and warm up outside the timing
                var samples: [Double] = []
                var cpuSamples: [Double] = []
                var total = 0
                for _ in 0..<runs {
                    let before = CPUTime.ofSelf()
                    let (count, seconds) = try deliver(client, target, for: duration)
                    samples.append(Double(count) / seconds)
                    cpuSamples.append((CPUTime.ofSelf() - before).total / Double(max(1, count)) * 1e6)
                    total += count
                }
                log("webhooks: \(label): \(String(format: "%.0f", Measure.median(samples))) deliveries/s, "
                    + "\(String(format: "%.0f", Measure.median(cpuSamples))) µs client CPU each")
                rates.append(Measure.median(samples))
                cpu.append(Measure.median(cpuSamples))
                counts.append(total)
            }
            report.check(name, passed: true, "\(counts.reduce(0, +)) deliveries")
            let baseline = max(1e-9, rates[0])
            report.add(Self.section, cases[0].0, rates[0], "deliveries/s",
                       note: "yardstick; \(counts[0]) deliveries, median of \(runs) × \(duration) s")
            for index in 1..<cases.count {
                report.add(Self.section, cases[index].0, rates[index], "deliveries/s",
                           note: String(format: "%.2f× the yardstick; %d deliveries", rates[index] / baseline, counts[index]))
            }
            for index in cases.indices {
                report.add(Self.section, cases[index].0 + ": client CPU per delivery", cpu[index], "µs", higherIsBetter: false,
                           note: index == 0 ? "yardstick; user + system time of the benchmark process"
                                            : String(format: "%.2f× the yardstick's", cpu[index] / max(1e-9, cpu[0])))
            }
            report.context.append(("webhooks", String(format: "before %.0f/s, %.0f µs CPU each (http, a connection each); after, keep-alive: %.0f/s, %.0f µs http (%.2f× the rate); %.0f/s, %.0f µs https (%.2f×)",
                                                      rates[0], cpu[0], rates[1], cpu[1], rates[1] / baseline, rates[2], cpu[2], rates[2] / baseline)))
        } catch {
            report.check(name, passed: false, "\(error)")
        }
    }

    private var script: String { repositoryRoot.appendingPathComponent("scripts/webhook-receiver.py").path }

    /// Delivers signed bodies back to back for `seconds`; returns the count and the elapsed time.
    private func deliver(_ client: any WebhookTransport, _ target: WebhookTarget, for seconds: Double) throws -> (Int, Double) {
        let body = Array(String(repeating: "x", count: 512).utf8)
        let start = Measure.wallSeconds()
        var count = 0
        var elapsed = 0.0
        repeat {
            let signature = WebhookSignature(body: body, secret: "benchmark-secret-0123456789", timestamp: Int64(Date().timeIntervalSince1970))
            let headers = [("Content-Type", "application/cloudevents+json"), ("Idempotency-Key", String(format: "%032x", count)),
                           (WebhookSignature.headerName, signature.headerValue), ("Perimeter-Webhook-Id", "wh_bench"),
                           ("Perimeter-Event-Sequence", String(count))]
            let status = try client.post(to: target, headers: headers, body: body)
            guard status == 204 else { throw Failure(description: "\(target.scheme) delivery \(count) answered \(status), not 204") }
            count += 1
            elapsed = Measure.wallSeconds() - start
        } while elapsed < seconds
        return (count, elapsed)
    }

    /// A throw-away CA and a certificate for 127.0.0.1 (openssl command); returns the CA's path.
    static func makeCertificates(in folder: URL) throws -> String {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509", "-new"] + ec + ["-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "2",
                                                       "-subj", "/CN=Perimeter Bench CA"])
        try openssl(["req", "-new"] + ec + ["-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"])
        try "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n"
            .write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
                     "-set_serial", "2", "-days", "2", "-extfile", path("server.ext"), "-out", path("server.pem")])
        return path("ca.pem")
    }

    private static func openssl(_ arguments: [String]) throws {
        let outcome = ChildProcess.run(["/usr/bin/openssl"] + arguments)
        guard outcome.status == 0 else {
            throw Failure(description: "openssl \(arguments.prefix(2).joined(separator: " ")) failed (status \(outcome.status))")
        }
    }
}

/// scripts/webhook-receiver.py as a child process, on core 0 when the benchmark has another one.
private final class ReceiverProcess {
    let port: UInt16
    private let process = Process()

    init(script: String, arguments: [String]) throws {
        guard FileManager.default.fileExists(atPath: script) else {
            throw WebhookBench.Failure(description: "\(script) is missing (run perimeter-bench from the repository's root)")
        }
        var argv = ["/usr/bin/python3", script, "--quiet"] + arguments
        if ProcessInfo.processInfo.activeProcessorCount > 1, FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") {
            argv = ["/usr/bin/taskset", "-c", "0"] + argv
        }
        process.executableURL = URL(fileURLWithPath: argv[0])
        process.arguments = Array(argv.dropFirst())
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The first line is {"port": N}; the receiver prints nothing else with --quiet.
        var line = Data()
        let reader = output.fileHandleForReading
        while !line.contains(10) {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let digits = text.split(whereSeparator: { !$0.isNumber }).first, let port = UInt16(digits) else {
            kill(process.processIdentifier, SIGKILL)
            throw WebhookBench.Failure(description: "webhook-receiver.py did not announce its port (got \"\(text)\")")
        }
        self.port = port
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}
