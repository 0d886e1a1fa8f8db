import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterService

/// Batch throughput of `ShardedEngine` and of the service's batch path with 1 to N shards, in wall-clock
/// time (the point is using more cores, so CPU time would hide it). All shard counts are measured in one
/// run, interleaved, so the ratios compare like with like on a shared machine.
///
/// Needs the cores it is to use: run it unpinned (`perimeter-bench --only shards`, `make bench-shards`);
/// under `taskset -c 1` every count gets one core and the report says so.
public struct ShardBench: Sendable {
    /// Section names.
    public enum Section {
        public static let engine = "Sharded engine, batch throughput (wall clock)"
        public static let service = "GeofencingService with shards, in-memory store, live time (wall clock)"
    }

    /// The workload.
    public var workload: Workload
    /// Repetitions per shard count (the median is reported).
    public var runs: Int
    /// The largest shard count measured (the curve runs 1 … this).
    public var maximumShards: Int
    /// Updates per batch.
    public var batchSize = 10_000

    /// Creates the benchmark.
    public init(workload: Workload, runs: Int, maximumShards: Int) {
        self.workload = workload
        self.runs = runs
        self.maximumShards = max(1, maximumShards)
    }

    /// CPUs this process may run on (its affinity mask), or the online count when unknown.
    static func usableCores() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else {
            return ProcessInfo.processInfo.activeProcessorCount
        }
        for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
            let list = line.split(separator: ":", maxSplits: 1)[1].trimmingCharacters(in: .whitespaces)
            var count = 0
            for part in list.split(separator: ",") {
                let bounds = part.split(separator: "-").compactMap { Int($0) }
                count += bounds.count == 2 ? bounds[1] - bounds[0] + 1 : 1
            }
            return max(1, count)
        }
        return ProcessInfo.processInfo.activeProcessorCount
    }

    /// Runs the engine and the service curves.
    public func run(into report: inout Report) {
        let cores = Self.usableCores()
        if cores < maximumShards {
            report.note("shards: this process may use \(cores) core\(cores == 1 ? "" : "s") (affinity); counts above that cannot scale — run perimeter-bench --only shards without taskset")
        }
        let fences = EngineBench.fences(workload)
        var fenceSet = FenceSet(fences)
        fenceSet.prepare()
        let updates = EngineBench.updates(workload.fixes)
        let counts = Array(1...maximumShards)
        log("shards: \(updates.count) updates in batches of \(batchSize), 1…\(maximumShards) shards, \(runs) runs each")

        // Engine: interleaved runs (1, 2, …, N, 1, 2, …) so that load from others falls on every count alike.
        var engineSamples = [[Double]](repeating: [], count: counts.count)
        var engineCPU = [[Double]](repeating: [], count: counts.count)
        var statistics = [DetectionEngine.Statistics?](repeating: nil, count: counts.count)
        // Besides: N shards run one after another on the calling thread, which separates the cost of
        // splitting and merging from that of running on several cores.
        var serialSamples: [Double] = [], serialCPU: [Double] = []
        let plan: [(Int, Int)] = counts.enumerated().map { ($0.offset, $0.element) } + (maximumShards > 1 ? [(-1, maximumShards)] : [])
        for _ in 0..<max(1, runs) {
            for (k, n) in plan {
                var engine = ShardedEngine(fences: fenceSet, shards: n)
                if k < 0 { engine.parallelThreshold = .max }
                let start = Measure.wallSeconds(), cpu = Measure.cpuSeconds()
                var offset = 0
                while offset < updates.count {
                    let end = min(offset + batchSize, updates.count)
                    _ = engine.process(updates[offset..<end])
                    offset = end
                }
                if k < 0 {
                    serialSamples.append(Measure.wallSeconds() - start)
                    serialCPU.append(Measure.cpuSeconds() - cpu)
                    continue
                }
                engineSamples[k].append(Measure.wallSeconds() - start)
                engineCPU[k].append(Measure.cpuSeconds() - cpu)
                statistics[k] = engine.statistics
            }
        }
        let engineRates = engineSamples.map { Double(updates.count) / Measure.median($0) }
        for (k, n) in counts.enumerated() {
            report.add(Section.engine, "\(n) shard\(n == 1 ? "" : "s")", engineRates[k], "updates/s",
                       note: String(format: "%.2f× one shard; CPU time (all threads) %.2f× one shard's; median of %d",
                                    engineRates[k] / engineRates[0], Measure.median(engineCPU[k]) / Measure.median(engineCPU[0]), runs),
                       reference: n == 1, comparedToReference: false)
        }
        if !serialSamples.isEmpty {
            let rate = Double(updates.count) / Measure.median(serialSamples)
            report.add(Section.engine, "\(maximumShards) shards on one thread", rate, "updates/s",
                       note: String(format: "%.2f× one shard; CPU time %.2f× one shard's: the cost of splitting and merging; median of %d",
                                    rate / engineRates[0], Measure.median(serialCPU) / Measure.median(engineCPU[0]), runs),
                       comparedToReference: false)
        }
        report.check("sharded engine: every shard count gives one shard's counts",
                     passed: statistics.allSatisfy { $0 == statistics[0] },
                     statistics.map { "\($0?.entries ?? -1)/\($0?.exits ?? -1)" }.joined(separator: ", "))

        // The service's batch path (live time: the path a server runs), in-memory store.
        let features = ServiceBench.features(workload)
        var serviceSamples = [[Double]](repeating: [], count: counts.count)
        var serviceStatistics = [DetectionEngine.Statistics?](repeating: nil, count: counts.count)
        var failure: String?
        for _ in 0..<max(1, runs) where failure == nil {
            for (k, n) in counts.enumerated() {
                do {
                    let service = GeofencingService(store: InMemoryGeofencingStore(), tickInterval: nil)
                    try service.configure(GeofencingOptions(maximumFutureSkew: 1e12, shards: n))
                    try service.addFeatures(features)
                    let start = Measure.wallSeconds()
                    var offset = 0
                    while offset < updates.count {
                        let end = min(offset + batchSize, updates.count)
                        _ = try service.process(updates[offset..<end])
                        offset = end
                    }
                    serviceSamples[k].append(Measure.wallSeconds() - start)
                    serviceStatistics[k] = service.statistics
                    try service.close()
                } catch {
                    failure = "\(error)"
                    break
                }
            }
        }
        if let failure {
            report.note("shards: the service run failed: \(failure)")
            return
        }
        let serviceRates = serviceSamples.map { Double(updates.count) / Measure.median($0) }
        for (k, n) in counts.enumerated() {
            report.add(Section.service, "\(n) shard\(n == 1 ? "" : "s")", serviceRates[k], "updates/s",
                       note: String(format: "%.2f× one shard; %.2f× the sharded engine's time; median of %d",
                                    serviceRates[k] / serviceRates[0], engineRates[k] / serviceRates[k], runs),
                       reference: n == 1, comparedToReference: false)
        }
        report.check("service with shards: every shard count gives the bare engine's counts",
                     passed: serviceStatistics.allSatisfy { $0?.entries == statistics[0]?.entries && $0?.exits == statistics[0]?.exits },
                     serviceStatistics.map { "\($0?.entries ?? -1)/\($0?.exits ?? -1)" }.joined(separator: ", "))
        report.curves.append(Report.Curve(
            title: "Batch throughput by shard count (wall clock, \(cores) usable cores)", xLabel: "shards",
            columns: ["engine updates/s", "engine speed-up", "service updates/s", "service speed-up"],
            rows: counts.indices.map { k in
                [Double(counts[k]), engineRates[k], engineRates[k] / engineRates[0], serviceRates[k], serviceRates[k] / serviceRates[0]]
            },
            plotted: 1))
    }
}
