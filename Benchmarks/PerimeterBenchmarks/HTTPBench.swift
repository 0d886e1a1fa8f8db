import Foundation

/// The server's HTTP ingest: `perimeter serve` (the release binary next to perimeter-bench) as a child
/// process on a loopback port, with the workload's polygon fences and the SQLite store in a fresh
/// folder, driven by `wrk` when it is installed and by the built-in event-loop client
/// (``HTTPLoadGenerator``) otherwise. With wrk, the built-in client also measures the trivial endpoint and
/// single updates, alternating with wrk, as rows of their own. `PERIMETER_BENCH_HTTP_CLIENT=builtin|wrk|both`
/// chooses (default `both` when wrk exists, else `builtin`); `PERIMETER_BENCH_HTTP_CLIENT_THREADS=N` sets
/// the built-in client's threads (default 1; a list such as `1,2` measures each, alternating).
///
/// Figures, each with its ratio to the trivial endpoint (`GET /healthz`) measured in the same run and
/// with the same client: single-update `POST /v1/locations` requests (64 connections), and batches of
/// 1,000 updates as a JSON array and as NDJSON (4 connections). Every device's updates travel on one
/// connection, in time order, so every update must be accepted: the check reads the server's counters
/// (`/metrics`) before and after, and a phase with a rejected update or a non-200 answer fails.
///
/// Every figure's note also gives the CPU time per request of the server (`/proc/<pid>/stat`) and of the
/// client (wrk's worker threads, or the built-in client's threads): how much of the two cores the client
/// leaves to the server. The built-in client's rows also give the requests' latency (p50, p99).
public struct HTTPBench: Sendable {
    /// Section name.
    public static let section = "HTTP ingest (perimeter serve, loopback, SQLite store)"

    /// The workload (its polygon fences are loaded; its fixes are the updates).
    public var workload: Workload
    /// Repetitions of every figure (the median is reported).
    public var runs: Int
    /// Seconds each figure is measured for.
    public var duration: Double
    /// Where the server's database and the scripts go (a subfolder `http`, emptied first).
    public var workDirectory: URL
    /// The perimeter-bench executable (`perimeter` is looked up beside it).
    public var executable: String
    /// Smoke mode: may fall back to a debug `perimeter`, and the figures are checks, not speeds.
    public var smoke: Bool
    /// Updates per batch request.
    public var batchSize = 1_000
    /// Connections for the trivial endpoint and single updates. 64: a client that waits for each answer
    /// sends at most connections ÷ latency requests/s, and answers wait for a commit that the requests
    /// in flight share, so the server needs many in flight (a fleet's devices, or a gateway's pool) to
    /// group them. The environment's `PERIMETER_BENCH_HTTP_CONNECTIONS` overrides it.
    public var connections = 64
    /// Connections for batches (each sends one request at a time, so every device's updates stay in order).
    public var batchConnections = 4
    /// Threads of the built-in client (its connections are shared among them); the environment's
    /// `PERIMETER_BENCH_HTTP_CLIENT_THREADS` overrides it.
    public var clientThreads = 1

    /// Creates the benchmark.
    public init(workload: Workload, runs: Int, duration: Double, workDirectory: URL, executable: String, smoke: Bool) {
        self.workload = workload
        self.runs = runs
        self.duration = duration
        self.workDirectory = workDirectory
        self.executable = executable
        self.smoke = smoke
    }

    /// What one phase sends.
    enum Phase: String, CaseIterable {
        case trivial, single, array, ndjson

        var subject: String {
            switch self {
            case .trivial: "GET /healthz (trivial endpoint)"
            case .single: "POST /v1/locations, one update per request"
            case .array: "POST /v1/locations, JSON arrays of 1,000"
            case .ndjson: "POST /v1/locations, NDJSON batches of 1,000"
            }
        }
    }

    /// A load generator.
    enum Client: String {
        case wrk, builtin
    }

    /// One measurement's kind: what is sent, by which client, with how many client threads (0 for wrk).
    struct Leg: Hashable {
        var phase: Phase
        var client: Client
        var threads = 0

        /// The leg measuring the trivial endpoint with the same client: this leg's yardstick.
        var yardstick: Leg { Leg(phase: .trivial, client: client, threads: threads) }
    }

    /// Which clients measure which phases: `PERIMETER_BENCH_HTTP_CLIENT` (`builtin`, `wrk` or `both`;
    /// default `both` when wrk exists, else `builtin`), and the built-in client's thread counts
    /// (`PERIMETER_BENCH_HTTP_CLIENT_THREADS`: one, or a comma-separated list; default `[default]`).
    /// With both, wrk measures every phase and the built-in client, with each thread count, the trivial
    /// endpoint and single updates, each right after wrk's. Built-in only: every phase with each count.
    /// - Returns: the legs in measuring order and a note when the choice was changed (wrk missing), or
    ///   an error naming a value that is not valid.
    static func legs(setting: String?, threadSetting: String?, defaultThreads: Int,
                     wrkExists: Bool) -> Result<(legs: [Leg], note: String?), BenchFailure> {
        let choice = setting.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? (wrkExists ? "both" : "builtin")
        guard ["builtin", "wrk", "both"].contains(choice) else {
            return .failure(BenchFailure("PERIMETER_BENCH_HTTP_CLIENT=\(setting ?? ""): expected builtin, wrk or both"))
        }
        var counts = [defaultThreads]
        if let threadSetting {
            let parsed = threadSetting.split(separator: ",", omittingEmptySubsequences: false)
                .map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !parsed.isEmpty, parsed.allSatisfy({ $0.map { (1...64).contains($0) } ?? false }) else {
                return .failure(BenchFailure("PERIMETER_BENCH_HTTP_CLIENT_THREADS=\(threadSetting): expected a thread count from 1 to 64, or a comma-separated list of them"))
            }
            counts = []
            for count in parsed.compactMap({ $0 }) where !counts.contains(count) { counts.append(count) }
        }
        func builtin(_ phase: Phase) -> [Leg] { counts.map { Leg(phase: phase, client: .builtin, threads: $0) } }
        if choice != "builtin" && !wrkExists {
            return .success((Phase.allCases.flatMap(builtin),
                             "PERIMETER_BENCH_HTTP_CLIENT=\(choice) but wrk is not on PATH: the built-in client measures every phase"))
        }
        switch choice {
        case "builtin": return .success((Phase.allCases.flatMap(builtin), nil))
        case "wrk": return .success((Phase.allCases.map { Leg(phase: $0, client: .wrk) }, nil))
        default:
            return .success((Phase.allCases.flatMap { phase in
                [Leg(phase: phase, client: .wrk)] + (phase == .trivial || phase == .single ? builtin(phase) : [])
            }, nil))
        }
    }

    /// One measurement.
    struct Sample {
        var requestsPerSecond: Double
        var updatesPerSecond: Double
        /// The server's CPU time per request (`nil` when `/proc/<pid>/stat` could not be read).
        var serverCPU: CPUTime?
        /// The client's CPU time per request: wrk's own (`wait4`), or the built-in client's threads'.
        var clientCPU: CPUTime?
        /// The requests' latencies (built-in client only).
        var latency: LatencyHistogram?
    }

    /// Runs every phase `runs` times against one server and adds figures and checks to `report`.
    public func run(into report: inout Report) {
        let directory = workDirectory.appendingPathComponent("http")
        try? FileManager.default.removeItem(at: directory)
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try Data(WorkloadFiles.geoJSON(workload.fences)).write(to: directory.appendingPathComponent("fences.geojson"))
        } catch {
            report.check("HTTP ingest: prepare \(directory.path)", passed: false, "\(error)")
            return
        }
        guard let binary = serverBinary() else {
            report.note("HTTP ingest not measured: no `perimeter` binary beside \(executable); build it with `swift build -c release --product perimeter`.")
            return
        }
        let environment = ProcessInfo.processInfo.environment
        let legs: [Leg]
        switch Self.legs(setting: environment["PERIMETER_BENCH_HTTP_CLIENT"], threadSetting: environment["PERIMETER_BENCH_HTTP_CLIENT_THREADS"],
                         defaultThreads: clientThreads, wrkExists: ChildProcess.exists("wrk")) {
        case .failure(let failure):
            report.check("HTTP ingest: client choice", passed: false, failure.description)
            return
        case .success(let choice):
            legs = choice.legs
            if let note = choice.note { report.note(note) }
        }
        let style = WrkScript.Style.current
        // The first leg's client and threads get the usual row names; the others' rows are marked.
        let primary = legs[0]
        let threadCounts = Set(legs.filter { $0.client == .builtin }.map(\.threads))
        func clientName(_ leg: Leg) -> String {
            switch leg.client {
            case .wrk: "wrk (\(style.rawValue) script)"
            case .builtin: "built-in event-loop client (\(leg.threads) thread\(leg.threads == 1 ? "" : "s"))"
            }
        }
        func suffix(_ leg: Leg) -> String {
            guard leg.client != primary.client || leg.threads != primary.threads else { return "" }
            return threadCounts.count > 1 ? " (built-in event-loop client, \(leg.threads) thread\(leg.threads == 1 ? "" : "s"))"
                                          : " (built-in event-loop client)"
        }
        let parserProblems = LoadGeneratorSelfCheck.problems()
        report.check("HTTP ingest: the built-in client frames, checks and refuses canned responses", passed: parserProblems.isEmpty,
                     parserProblems.isEmpty ? "\(LoadGeneratorSelfCheck.caseCount) cases" : parserProblems.joined(separator: "; "))
        let clients = legs.filter { $0.phase == .trivial }.map(clientName)
        log("http: \(binary) serve with \(workload.fences.count) fences; clients: \(clients.joined(separator: ", "))")
        let server: ServerProcess
        do {
            server = try ServerProcess(binary: binary, arguments: ["--db", directory.appendingPathComponent("perimeter.sqlite").path,
                                                                   "--fences", directory.appendingPathComponent("fences.geojson").path],
                                       logPath: directory.appendingPathComponent("server.log").path, timeout: 600)
        } catch {
            report.check("HTTP ingest: perimeter serve starts", passed: false, error.description)
            return
        }
        var samples: [Leg: [Sample]] = [:]
        var failures: [Leg: String] = [:]
        for run in 0..<max(1, runs) {
            for leg in legs where failures[leg] == nil {
                let phase = leg.phase
                let prefix = "r\(run)\(phase.rawValue.prefix(1))\(leg.client == .wrk ? "w" : "b\(leg.threads)")-"
                let result = leg.client == .wrk ? measureWithWrk(phase, server: server, prefix: prefix, directory: directory, style: style)
                                                : measureWithGenerator(phase, server: server, prefix: prefix, threads: leg.threads)
                switch result {
                case .success(let sample):
                    samples[leg, default: []].append(sample)
                    let latency = sample.latency.map { "; \($0.summary)" } ?? ""
                    log("http: \(phase.rawValue) (\(leg.client.rawValue)\(leg.client == .builtin ? ", \(leg.threads)t" : "")) run \(run + 1): \(Report.format(sample.requestsPerSecond)) requests/s, \(Report.format(sample.updatesPerSecond)) updates/s; \(Self.cpuText(sample.serverCPU, sample.clientCPU, updates: 1))\(latency)")
                case .failure(let failure):
                    failures[leg] = failure.description
                }
            }
        }
        let status = server.stop()
        report.check("HTTP ingest: perimeter serve stops gracefully (SIGTERM)", passed: status == 0, "exit status \(status)")
        for leg in legs {
            let phase = leg.phase, client = clientName(leg)
            let suffix = suffix(leg), marked = !suffix.isEmpty
            let name = "HTTP ingest: \(phase.rawValue) — every request answered 200\(phase == .trivial ? "" : ", every update accepted")\(suffix)"
            if let failure = failures[leg] {
                report.check(name, passed: false, failure)
                continue
            }
            let phaseSamples = samples[leg, default: []]
            report.check(name, passed: !phaseSamples.isEmpty, "\(phaseSamples.count) run(s), \(client)")
            let trivial = Measure.median(samples[leg.yardstick, default: []].map(\.requestsPerSecond))
            let requests = Measure.median(phaseSamples.map(\.requestsPerSecond))
            let updates = Measure.median(phaseSamples.map(\.updatesPerSecond))
            let cpu = Self.cpuText(CPUTime.median(phaseSamples.compactMap(\.serverCPU)),
                                   CPUTime.median(phaseSamples.compactMap(\.clientCPU)), updates: phase == .trivial || phase == .single ? 1 : batchSize)
            var latency = LatencyHistogram(), latencies = 0
            for sample in phaseSamples {
                if let histogram = sample.latency { latency.merge(histogram); latencies += 1 }
            }
            let latencyText = latencies > 0 ? "; \(latency.summary) (all runs)" : ""
            let runsText = "median of \(phaseSamples.count), \(Self.format(duration)) s each, \(client); \(cpu)\(latencyText)"
            let yardstick = marked ? "the trivial endpoint's requests/s with the same client (its own row)" : "the trivial endpoint's requests/s"
            switch phase {
            case .trivial:
                report.add(Self.section, phase.subject + suffix, requests, "requests/s",
                           note: "\(connections) keep-alive connections; \(marked ? "the yardstick of this client's rows" : "the yardstick"); \(runsText)",
                           reference: !marked, comparedToReference: !marked)
            case .single:
                report.add(Self.section, phase.subject + suffix, updates, "updates/s",
                           note: String(format: "%.2f× %@; %d connections; goal ≥ 20,000/s; %@",
                                        trivial > 0 ? requests / trivial : 0, yardstick, connections, runsText))
            case .array, .ndjson:
                report.add(Self.section, phase.subject + suffix, updates, "updates/s",
                           note: String(format: "%@ requests/s; updates/s = %.2f× %@; %d connections; goal ≥ 150,000 updates/s; %@",
                                        Report.format(requests), trivial > 0 ? updates / trivial : 0, yardstick, batchConnections, runsText))
            }
        }
    }

    /// `perimeter` beside the benchmark (the release build); in smoke mode also the debug build.
    func serverBinary() -> String? {
        let folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        var candidates = [folder.appendingPathComponent("perimeter").path]
        if smoke { candidates.append(folder.deletingLastPathComponent().appendingPathComponent("debug/perimeter").path) }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    // MARK: - Requests

    /// Fix indices per connection: connection *c* gets the devices `d % count == c`, in stream order.
    func partition(_ count: Int, limit: Int) -> [[Int]] {
        var parts = [[Int]](repeating: [], count: count)
        let fixes = workload.fixes
        for index in 0..<min(limit, fixes.count) { parts[Int(fixes.device[index]) % count].append(index) }
        return parts
    }

    /// `{"deviceId":"<prefix><device>","latitude":…,"longitude":…,"time":…}`.
    func update(_ index: Int, prefix: String) -> String {
        let fixes = workload.fixes
        return "{\"deviceId\":\"\(prefix)\(fixes.device[index])\",\"latitude\":\(fixes.latitude[index]),\"longitude\":\(fixes.longitude[index]),\"time\":\(fixes.time[index])}"
    }

    /// The requests of `phase` for the built-in generator, one list per connection.
    func requests(_ phase: Phase, prefix: String) -> [[HTTPLoadGenerator.Request]] {
        switch phase {
        case .trivial:
            return Array(repeating: [HTTPLoadGenerator.Request(method: "GET", path: "/healthz")], count: connections)
        case .single:
            return partition(connections, limit: 400_000).map { part in
                part.map { HTTPLoadGenerator.Request(method: "POST", path: "/v1/locations", contentType: "application/json",
                                                     body: Array(update($0, prefix: prefix).utf8), expectedAccepted: 1) }
            }
        case .array, .ndjson:
            return partition(batchConnections, limit: Int.max).map { part in
                stride(from: 0, to: part.count, by: batchSize).map { start in
                    let items = part[start..<min(start + batchSize, part.count)].map { update($0, prefix: prefix) }
                    let body = phase == .array ? "[" + items.joined(separator: ",") + "]" : items.joined(separator: "\n") + "\n"
                    return HTTPLoadGenerator.Request(method: "POST", path: "/v1/locations",
                                                     contentType: phase == .array ? "application/json" : "application/x-ndjson",
                                                     body: Array(body.utf8), expectedAccepted: items.count)
                }
            }
        }
    }

    /// Measures `phase` with the built-in event-loop client on `threads` threads (the trivial endpoint
    /// repeats its one request on every connection).
    func measureWithGenerator(_ phase: Phase, server: ServerProcess, prefix: String, threads: Int) -> Result<Sample, BenchFailure> {
        let port = server.port
        let lists = requests(phase, prefix: prefix)
        let before = settledCounters(port: port)
        let serverBefore = CPUTime.of(pid: server.pid), clientBefore = CPUTime.ofSelf()
        let outcome = HTTPLoadGenerator.run(port: port, connections: lists, duration: duration, threads: threads, cycle: phase == .trivial)
        let clientCPU = outcome.clientCPU ?? (CPUTime.ofSelf() - clientBefore)
        let serverAfter = CPUTime.of(pid: server.pid)
        let after = counters(port: port)
        if outcome.failures > 0 {
            return .failure(BenchFailure("\(outcome.failures) failure(s) in \(outcome.requests) answered request(s); first: \(outcome.firstFailure ?? "?")"))
        }
        if phase != .trivial {
            let expected = outcome.accepted
            if let problem = Self.compare(before, after, atLeast: expected, atMost: expected) { return .failure(BenchFailure(problem)) }
        }
        return .success(Sample(requestsPerSecond: outcome.requestsPerSecond,
                               updatesPerSecond: Double(outcome.accepted) / outcome.seconds,
                               serverCPU: Self.delta(serverBefore, serverAfter)?.per(outcome.requests),
                               clientCPU: clientCPU.per(outcome.requests),
                               latency: outcome.latency))
    }

    // MARK: - wrk

    /// Measures `phase` with wrk; the server's counters prove every update was accepted.
    func measureWithWrk(_ phase: Phase, server: ServerProcess, prefix: String, directory: URL,
                        style: WrkScript.Style) -> Result<Sample, BenchFailure> {
        let port = server.port
        let url = "http://127.0.0.1:\(port)" + (phase == .trivial ? "/healthz" : "/v1/locations")
        // One connection per wrk thread: a thread's requests go out one at a time, so each device's
        // updates (all on one thread) arrive in time order.
        let connectionCount = phase == .single || phase == .trivial ? connections : batchConnections
        let threads = connectionCount
        var arguments = ["wrk", "-t\(threads)", "-c\(connectionCount)", "-d\(Self.format(duration))s"]
        if phase != .trivial {
            let base = directory.appendingPathComponent("records-\(phase.rawValue)").path
            do {
                let parts = partition(threads, limit: phase == .single ? 400_000 : Int.max)
                for (thread, part) in parts.enumerated() {
                    // One fragment per line: `<device>","latitude":…,"time":…}`; the script prepends the id prefix.
                    let lines = part.map { index in
                        let full = update(index, prefix: "")
                        return String(full.dropFirst("{\"deviceId\":\"".count))
                    }
                    try (lines.joined(separator: "\n") + "\n").write(toFile: "\(base)-\(thread).txt", atomically: true, encoding: .utf8)
                }
                let script = directory.appendingPathComponent("\(phase.rawValue).lua").path
                try WrkScript.source(batch: phase == .single ? 1 : batchSize, ndjson: phase == .ndjson, style: style)
                    .write(toFile: script, atomically: true, encoding: .utf8)
                arguments += ["-s", script, url, "--", base, prefix]
            } catch {
                return .failure(BenchFailure("cannot write the wrk script: \(error)"))
            }
        } else {
            let script = directory.appendingPathComponent("trivial.lua").path
            do { try WrkScript.trivialSource().write(toFile: script, atomically: true, encoding: .utf8) } catch {
                return .failure(BenchFailure("cannot write the wrk script: \(error)"))
            }
            arguments += ["-s", script, url]
        }
        let cores = ProcessInfo.processInfo.activeProcessorCount
        if cores > 1, FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") {
            arguments = ["/usr/bin/taskset", "-c", "0-\(cores - 1)"] + arguments
        }
        let before = settledCounters(port: port)
        let serverBefore = CPUTime.of(pid: server.pid)
        let out = ChildProcess.run(arguments)
        let serverAfter = CPUTime.of(pid: server.pid)
        let after = counters(port: port)
        guard out.status == 0, let report = WrkScript.parse(out.output) else {
            return .failure(BenchFailure("wrk failed (status \(out.status)): \(out.output.suffix(400))"))
        }
        if report.non2xx > 0 || report.socketErrors > 0 {
            return .failure(BenchFailure("\(report.non2xx) non-2xx answers, \(report.socketErrors) socket errors of \(report.requests) requests"))
        }
        let perRequest = phase == .trivial ? 0 : (phase == .single ? 1 : batchSize)
        if phase != .trivial {
            // Requests still in flight when wrk stops were answered too, but not counted by wrk.
            if let problem = Self.compare(before, after, atLeast: report.requests * perRequest,
                                          atMost: (report.requests + connectionCount) * perRequest) {
                return .failure(BenchFailure(problem))
            }
        }
        // wrk's load is its worker threads: its whole CPU time less its main thread's (the start, reading
        // the update files in every thread's `init`, then sleeping until the end).
        let clientCPU = report.mainThreadCPU.map { out.cpu - $0 } ?? out.cpu
        return .success(Sample(requestsPerSecond: report.requestsPerSecond,
                               updatesPerSecond: report.requestsPerSecond * Double(perRequest),
                               serverCPU: Self.delta(serverBefore, serverAfter)?.per(report.requests),
                               clientCPU: clientCPU.per(report.requests)))
    }

    // MARK: - Counters

    /// The server's accepted and rejected update counters, from `/metrics`.
    /// The counters once they stop moving: requests a previous run left in flight (wrk stops without
    /// waiting for its last answers) may still be committed and counted after it returned, and must not
    /// be counted against the next run. Polls every 50 ms, for at most 5 s.
    func settledCounters(port: UInt16) -> (accepted: Int, rejected: Int)? {
        var last = counters(port: port)
        for _ in 0..<100 {
            usleep(50_000)
            let now = counters(port: port)
            if let now, let previous = last, now == previous { return now }
            last = now
        }
        return last
    }

    func counters(port: UInt16) -> (accepted: Int, rejected: Int)? {
        guard let (status, body) = HTTPLoadGenerator.fetch(port: port, .init(method: "GET", path: "/metrics")), status == 200 else {
            return nil
        }
        var accepted = 0, rejected = 0
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let value = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            if line.hasPrefix("perimeter_updates_accepted_total ") { accepted = Int(value) }
            if line.hasPrefix("perimeter_updates_rejected_total") { rejected += Int(value) }
        }
        return (accepted, rejected)
    }

    /// `nil` when the counters moved as expected: no rejection, accepted within `atLeast...atMost`.
    static func compare(_ before: (accepted: Int, rejected: Int)?, _ after: (accepted: Int, rejected: Int)?,
                        atLeast: Int, atMost: Int) -> String? {
        guard let before, let after else { return "cannot read /metrics" }
        let accepted = after.accepted - before.accepted, rejected = after.rejected - before.rejected
        if rejected > 0 { return "the server rejected \(rejected) update(s) (see perimeter_updates_rejected_total)" }
        if accepted < atLeast || accepted > atMost {
            return "the server accepted \(accepted) updates; the client sent \(atLeast)\(atMost > atLeast ? "…\(atMost)" : "")"
        }
        return nil
    }

    /// `later - earlier` when both were read.
    static func delta(_ earlier: CPUTime?, _ later: CPUTime?) -> CPUTime? {
        guard let earlier, let later else { return nil }
        return later - earlier
    }

    /// "CPU per request: server 62 µs (user 40, sys 22), client 30 µs (…)", and per update for batches.
    static func cpuText(_ server: CPUTime?, _ client: CPUTime?, updates: Int) -> String {
        func text(_ name: String, _ time: CPUTime?) -> String {
            guard let time else { return "\(name) unknown" }
            return updates > 1 ? "\(name) \(time.microseconds) = \(time.per(updates).microseconds) per update"
                               : "\(name) \(time.microseconds)"
        }
        return "CPU per request: " + text("server", server) + ", " + text("client", client)
    }

    static func format(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}

/// Why a phase produced no figure.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
