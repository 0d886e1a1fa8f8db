import Foundation

/// Runs every benchmark named by the options and writes the results: what `perimeter-bench` does.
public enum BenchRunner {
    /// Runs perimeter-bench with `arguments` (without the program name); returns the exit status:
    /// 0 when every check agreed, 1 on any disagreement, 2 on a usage or I/O error.
    public static func main(arguments: [String], executable: String) -> Int32 {
        let options: BenchOptions
        do { options = try BenchOptions(arguments: arguments) } catch {
            log("\(error)")
            return 2
        }
        if let (mode, file) = options.child { return LoadBench.child(mode: mode, file: file) }
        do { return try run(options, executable: executable) } catch {
            log("error: \(error)")
            return 2
        }
    }

    static func run(_ options: BenchOptions, executable: String) throws -> Int32 {
        let work = URL(fileURLWithPath: options.workDirectory, isDirectory: true)
        let out = URL(fileURLWithPath: options.outputDirectory, isDirectory: true)
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let hold = try WorkFolderLock(folder: work.path)
        defer { withExtendedLifetime(hold) {} }
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        let shared = URL(fileURLWithPath: options.sharedDirectory, isDirectory: true)
        let sharedPresent = FileManager.default.fileExists(atPath: shared.appendingPathComponent("bench").path)

        var report = Report()
        let t0 = Measure.wallSeconds()
        let workload: Workload
        if let dir = options.workloadDirectory {
            log("reading workload from \(dir)")
            workload = try WorkloadFiles.read(from: URL(fileURLWithPath: dir, isDirectory: true))
        } else {
            log("generating workload (size \(options.size))")
            var parameters = WorkloadGenerator.Parameters.scaled(options.size)
            if options.smoke {
                // Many short walks rather than a few long ones, so that the tiny workload has hits to compare.
                parameters.devices = 1_000; parameters.fixesPerDevice = 20
            }
            workload = WorkloadGenerator(parameters).generate()
        }
        let data = work.appendingPathComponent(options.smoke ? "data-smoke" : "data")
        let parts = options.parts
        if parts.contains(.peers) { try WorkloadFiles.write(workload, to: data) }
        report.context = [
            ("mode", options.smoke ? "smoke (tiny workload, 1 run: checks, not figures)" : "full"),
            ("workload", "\(workload.origin): \(workload.fences.count) polygon fences (\(workload.vertexCount) vertices), \(workload.circles.count) circles, \(workload.fixes.count) updates from \(workload.fixes.deviceCount) devices"),
            ("timing", "CPU time of a process pinned to core \(options.core) (taskset); median of \(options.runs) runs"),
            ("machine", machine()),
            ("date", ISO8601DateFormatter().string(from: Date())),
        ]
        if options.partial {
            report.context.append(("parts", BenchPart.allCases.filter(parts.contains).map(\.rawValue).joined(separator: ", ") + " (--only)"))
        }
        log("workload ready in \(String(format: "%.1f", Measure.wallSeconds() - t0)) s: \(report.context[1].1)")

        var pairs = PairList(), entries = 0, exits = 0, circlePairs = PairList(), engineRate = 0.0
        if parts.contains(.engine) {
            let engine = EngineBench(workload: workload, runs: options.runs)
            (pairs, entries, exits) = engine.run(into: &report)
            report.check("the workload has hits to compare", passed: pairs.count > 0 && entries > 0,
                         "\(pairs.count) (update, fence) pairs, \(entries) entries")
            circlePairs = engine.runCircles(into: &report)
            engineRate = report.figures.first { $0.section == EngineBench.Section.engine && $0.isReference }?.value ?? 0
        }
        if parts.contains(.peers) {
            let context = PeerContext(
                dataDirectory: data, workDirectory: work, scriptDirectory: URL(fileURLWithPath: options.scriptDirectory),
                sharedDirectory: sharedPresent ? shared : nil, runs: options.runs,
                slowPeerPoints: options.smoke ? nil : options.slowPeerPoints, core: options.core,
                pairs: pairs, entries: entries, exits: exits, circlePairs: circlePairs, devices: workload.fixes.device)
            if options.peers.contains("refgrid") { RefgridPeer.run(context, into: &report) }
            if options.peers.contains("shapely") { ShapelyPeer.run(context, into: &report) }
            if options.peers.contains("postgis") { PostGISPeer.run(context, into: &report) }
        }
        if parts.contains(.service) {
            ServiceBench(workload: workload, runs: options.smoke ? 1 : min(options.runs, 3), workDirectory: work)
                .run(engineUpdatesPerSecond: engineRate, entries: entries, exits: exits, into: &report)
        }
        if parts.contains(.http) {
            var http = HTTPBench(workload: workload, runs: options.smoke ? 1 : 3, duration: options.smoke ? 1 : 5, workDirectory: work,
                                 executable: executable, smoke: options.smoke)
            // PERIMETER_BENCH_HTTP_CONNECTIONS: connections for the trivial endpoint and single updates (16).
            if let text = ProcessInfo.processInfo.environment["PERIMETER_BENCH_HTTP_CONNECTIONS"], let count = Int(text), count > 0 {
                http.connections = count
            }
            http.run(into: &report)
        }
        if parts.contains(.fanout) { FanoutBench(smoke: options.smoke, workDirectory: work).run(into: &report) }
        if parts.contains(.webhooks) {
            // The scripts folder (bench/) sits in the repository's root, beside scripts/webhook-receiver.py.
            let root = URL(fileURLWithPath: options.scriptDirectory, isDirectory: true).deletingLastPathComponent()
            WebhookBench(smoke: options.smoke, workDirectory: work, repositoryRoot: root).run(into: &report)
        }
        if parts.contains(.load) {
            LoadBench.run(workload: workload, targetBytes: options.loadBytes, runs: options.smoke ? 1 : 3, core: options.core,
                          workDirectory: work, executable: executable, into: &report)
        }
        if parts.contains(.import) {
            ImportBench(workload: workload, workloadDirectory: options.workloadDirectory, runs: options.smoke ? 1 : 3,
                        workDirectory: work, executable: executable, smoke: options.smoke).run(into: &report)
        }
        if parts.contains(.scaling) {
            let scaling = ScalingBench(
                workload: workload, runs: options.smoke ? 1 : 3, fixes: options.smoke ? 2_000 : 100_000,
                fenceCounts: BenchOptions.decades(100, options.maxFences),
                deviceCounts: BenchOptions.decades(options.smoke ? 100 : 1_000, options.maxDevices),
                vertexCounts: BenchOptions.decades(10, options.maxVertices))
            scaling.run(into: &report)
        }
        if parts.contains(.shards) {
            ShardBench(workload: workload, runs: options.smoke ? 1 : 3,
                       maximumShards: ProcessInfo.processInfo.activeProcessorCount, workDirectory: work).run(into: &report)
        }
        if parts.contains(.cluster) {
            ClusterBench(smoke: options.smoke).run(into: &report)
        }
        report.context.append(("duration", String(format: "%.0f s", Measure.wallSeconds() - t0)))

        try report.json().write(to: out.appendingPathComponent("results.json"), atomically: true, encoding: .utf8)
        try report.markdown().write(to: out.appendingPathComponent("results.md"), atomically: true, encoding: .utf8)
        try ReportChart.svg(report).write(to: out.appendingPathComponent("results.svg"), atomically: true, encoding: .utf8)
        print(report.markdown())
        log("results written to \(out.path)/results.{json,md,svg}")
        if !report.passed {
            log("FAILED: engines disagree (see the agreement checks); figures are not valid")
            return 1
        }
        return 0
    }

    /// CPU model and core count.
    static func machine() -> String {
        let info = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model = info.split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(model), \(ProcessInfo.processInfo.activeProcessorCount) cores, Swift release build"
    }
}
