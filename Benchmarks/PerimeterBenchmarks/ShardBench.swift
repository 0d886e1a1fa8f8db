import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService
import PerimeterSQLite

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
        public static let sqlite = "GeofencingService with shards, SQLite store, live time (wall clock)"
    }

    /// The workload.
    public var workload: Workload
    /// Repetitions per shard count (the median is reported).
    public var runs: Int
    /// The largest shard count measured (the curve runs 1 … this).
    public var maximumShards: Int
    /// Updates per batch.
    public var batchSize = 10_000
    /// Where the SQLite files go.
    public var workDirectory: URL

    /// Creates the benchmark.
    public init(workload: Workload, runs: Int, maximumShards: Int,
                workDirectory: URL = FileManager.default.temporaryDirectory) {
        self.workload = workload
        self.runs = runs
        self.maximumShards = max(1, maximumShards)
        self.workDirectory = workDirectory
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

    /// One pass of bare fence-index queries over `coordinates`, in order, with the engine's read-ahead
    /// (the next three updates' index memory, a level each): what a shard's loop costs without the
    /// engine. Returns the number of hits, and the words read ahead (so they are not optimised away).
    static func queryPass(_ fences: FenceSet, _ coordinates: UnsafeBufferPointer<Coordinate>) -> (hits: Int, sink: UInt64) {
        var set = fences  // shares the prepared index; `slots(containing:)` only reads it
        var hits: [FenceSet.Slot] = []
        hits.reserveCapacity(64)
        var total = 0
        var sink: UInt64 = 0
        let n = coordinates.count
        if n > 1 { sink &+= set.readAhead(coordinates[1], step: 0) &+ set.readAhead(coordinates[1], step: 1) }
        if n > 2 { sink &+= set.readAhead(coordinates[2], step: 0) }
        for k in 0..<n {
            if k + 3 < n { sink &+= set.readAhead(coordinates[k + 3], step: 0) }
            if k + 2 < n { sink &+= set.readAhead(coordinates[k + 2], step: 1) }
            if k + 1 < n { sink &+= set.readAhead(coordinates[k + 1], step: 2) }
            set.slots(containing: coordinates[k], into: &hits)
            total += hits.count
        }
        return (total, sink)
    }

    /// Bare index queries over every update, split into `threads` parts by the shards' partition and
    /// run at once, one part per thread, in a single `concurrentPerform` (no hand-off per batch): the
    /// most `threads` cores can give to the shards' index work, the ceiling of their speed-up. Returns
    /// wall and CPU seconds and the total hits.
    static func timeQueries(_ fences: FenceSet, _ updates: [LocationUpdate], threads: Int) -> (wall: Double, cpu: Double, hits: Int) {
        var parts = [[Coordinate]](repeating: [], count: threads)
        for update in updates { parts[ShardedEngine.shard(of: update.device, among: threads)].append(update.coordinate) }
        let results = UnsafeMutableBufferPointer<(hits: Int, sink: UInt64)>.allocate(capacity: threads)
        defer { results.deallocate() }
        results.initialize(repeating: (0, 0))
        let shared = UnsafeSendableBench((parts, results, fences))
        let start = Measure.wallSeconds(), cpu = Measure.cpuSeconds()
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            let (parts, results, fences) = shared.value
            results[t] = parts[t].withUnsafeBufferPointer { queryPass(fences, $0) }
        }
        let wall = Measure.wallSeconds() - start, used = Measure.cpuSeconds() - cpu
        querySink &+= results.reduce(0) { $0 &+ $1.sink }
        return (wall, used, results.reduce(0) { $0 + $1.hits })
    }

    /// Where the query passes' read-ahead words go.
    nonisolated(unsafe) static var querySink: UInt64 = 0

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
        // And the plain engine's batch call (`DetectionEngine.process(contentsOf:into:)`): the yardstick
        // for the sharded path's overhead, in CPU time.
        var plainCPU: [Double] = []
        var plainStatistics: DetectionEngine.Statistics?
        // The ceiling: bare index queries on 1 and on N threads at once (`timeQueries`).
        var querySamples = [[Double]](repeating: [], count: 2), queryCPU = [[Double]](repeating: [], count: 2)
        var queryHits = [Int](repeating: -1, count: 2)
        var plan: [(Int, Int)] = [(-2, 1)] + counts.enumerated().map { ($0.offset, $0.element) }
            + (maximumShards > 1 ? [(-1, maximumShards), (-3, 1), (-3, maximumShards)] : [])
        // PERIMETER_BENCH_SHARD_PLAN=plain|1|2|…|2s|q1|q2|… (one of them): that configuration alone, engine
        // only — for profiles of one configuration (callgrind, perf; docs/benchmarks.md). `qN`: bare index
        // queries on N threads; two processes running `q1` at once give the ceiling of two cores.
        if let only = ProcessInfo.processInfo.environment["PERIMETER_BENCH_SHARD_PLAN"] {
            if only.hasPrefix("q"), let n = Int(only.dropFirst()), n >= 1 { plan = [(-3, n)] }
            plan = plan.filter { k, n in only == (k == -2 ? "plain" : k == -1 ? "\(n)s" : k == -3 ? "q\(n)" : "\(n)") }
            log("shards: PERIMETER_BENCH_SHARD_PLAN=\(only): \(plan.count) configuration(s), no report")
            // PERIMETER_BENCH_SHARD_REPEAT: how many times (default: the runs), so that the engine's work
            // outweighs generating the workload.
            let repeats = ProcessInfo.processInfo.environment["PERIMETER_BENCH_SHARD_REPEAT"].flatMap { Int($0) } ?? runs
            for _ in 0..<max(1, repeats) {
                for (k, n) in plan {
                    if k == -3 {
                        let (wall, cpu, hits) = Self.timeQueries(fenceSet, updates, threads: n)
                        log(String(format: "shards: q%d: %d hits, %.3f s wall, %.3f s CPU, %.2f M queries/s (wall)",
                                   n, hits, wall, cpu, Double(updates.count) / wall / 1e6))
                    } else if k == -2 {
                        var plain = DetectionEngine(fences: fenceSet)
                        var events: [GeofenceEvent] = []
                        for start in stride(from: 0, to: updates.count, by: batchSize) {
                            events.removeAll()
                            _ = plain.process(contentsOf: Array(updates[start..<min(start + batchSize, updates.count)]), into: &events)
                        }
                        log("shards: plain: \(plain.statistics.entries) entries")
                    } else {
                        var engine = ShardedEngine(fences: fenceSet, shards: n)
                        if k < 0 { engine.parallelThreshold = .max }
                        for start in stride(from: 0, to: updates.count, by: batchSize) {
                            _ = engine.process(updates[start..<min(start + batchSize, updates.count)])
                        }
                        log("shards: \(n): \(engine.statistics.entries) entries")
                    }
                }
            }
            return
        }
        for _ in 0..<max(1, runs) {
            for (k, n) in plan {
                if k == -3 {
                    let (wall, cpu, hits) = Self.timeQueries(fenceSet, updates, threads: n)
                    let q = n == 1 ? 0 : 1
                    querySamples[q].append(wall)
                    queryCPU[q].append(cpu)
                    queryHits[q] = hits
                    continue
                }
                if k == -2 {
                    var plain = DetectionEngine(fences: fenceSet)
                    let cpu = Measure.cpuSeconds()
                    var offset = 0
                    var events: [GeofenceEvent] = []
                    while offset < updates.count {
                        let end = min(offset + batchSize, updates.count)
                        events.removeAll()
                        _ = plain.process(contentsOf: Array(updates[offset..<end]), into: &events)
                        offset = end
                    }
                    plainCPU.append(Measure.cpuSeconds() - cpu)
                    plainStatistics = plain.statistics
                    continue
                }
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
        let plainSeconds = Measure.median(plainCPU)
        report.add(Section.engine, "plain DetectionEngine, batch call (CPU time)", Double(updates.count) / plainSeconds, "updates/s",
                   note: String(format: "updates ÷ CPU seconds; the yardstick of the CPU-time ratios below; median of %d", runs),
                   comparedToReference: false)
        for (k, n) in counts.enumerated() {
            report.add(Section.engine, "\(n) shard\(n == 1 ? "" : "s")", engineRates[k], "updates/s",
                       note: String(format: "%.2f× one shard; CPU time (all threads) %.2f× one shard's, %.2f× the plain engine's; median of %d",
                                    engineRates[k] / engineRates[0], Measure.median(engineCPU[k]) / Measure.median(engineCPU[0]),
                                    Measure.median(engineCPU[k]) / plainSeconds, runs),
                       reference: n == 1, comparedToReference: false)
        }
        if !serialSamples.isEmpty {
            let rate = Double(updates.count) / Measure.median(serialSamples)
            report.add(Section.engine, "\(maximumShards) shards on one thread", rate, "updates/s",
                       note: String(format: "%.2f× one shard; CPU time %.2f× one shard's, %.2f× the plain engine's: the cost of splitting and merging; median of %d",
                                    rate / engineRates[0], Measure.median(serialCPU) / Measure.median(engineCPU[0]),
                                    Measure.median(serialCPU) / plainSeconds, runs),
                       comparedToReference: false)
        }
        if !querySamples[1].isEmpty {
            let one = Measure.median(querySamples[0]), many = Measure.median(querySamples[1])
            report.add(Section.engine, "bare index queries, 1 thread", Double(updates.count) / one, "queries/s",
                       note: String(format: "the shards' loop without the engine (read-ahead included); CPU %.3f s; median of %d",
                                    Measure.median(queryCPU[0]), runs),
                       comparedToReference: false)
            report.add(Section.engine, "bare index queries, \(maximumShards) threads", Double(updates.count) / many, "queries/s",
                       note: String(format: "%.2f× one thread (the ceiling for %d shards: one pass, no hand-offs); CPU time %.2f× one thread's; median of %d",
                                    one / many, maximumShards, Measure.median(queryCPU[1]) / Measure.median(queryCPU[0]), runs),
                       comparedToReference: false)
            report.check("bare index queries: the same hits on 1 and \(maximumShards) threads", passed: queryHits[0] == queryHits[1],
                         "\(queryHits[0]) and \(queryHits[1])")
        }
        report.check("sharded engine: every shard count gives one shard's counts, and the plain engine's",
                     passed: statistics.allSatisfy { $0 == statistics[0] } && plainStatistics == statistics[0],
                     statistics.map { "\($0?.entries ?? -1)/\($0?.exits ?? -1)" }.joined(separator: ", "))

        // The service's batch path (live time: the path a server runs), in-memory store.
        let features = ServiceBench.features(workload)
        var serviceSamples = [[Double]](repeating: [], count: counts.count)
        var serviceCPU = [[Double]](repeating: [], count: counts.count)
        var serviceStatistics = [DetectionEngine.Statistics?](repeating: nil, count: counts.count)
        // The same with the SQLite store (WAL, one commit per batch), 1 and N shards.
        let sqliteCounts = Array(Set([1, maximumShards])).sorted()
        var sqliteSamples = [[Double]](repeating: [], count: sqliteCounts.count)
        var sqliteCPU = [[Double]](repeating: [], count: sqliteCounts.count)
        var sqliteStatistics = [DetectionEngine.Statistics?](repeating: nil, count: sqliteCounts.count)
        var failure: String?
        let sqlitePath = workDirectory.appendingPathComponent("shard-bench.sqlite").path
        func feed(_ store: any GeofencingStore, shards n: Int) throws -> (wall: Double, cpu: Double, DetectionEngine.Statistics) {
            let service = GeofencingService(store: store, tickInterval: nil)
            try service.configure(GeofencingOptions(maximumFutureSkew: 1e12, shards: n))
            try service.addFeatures(features)
            let start = Measure.wallSeconds(), cpu = Measure.cpuSeconds()
            var offset = 0
            while offset < updates.count {
                let end = min(offset + batchSize, updates.count)
                _ = try service.process(updates[offset..<end])
                offset = end
            }
            let result = (Measure.wallSeconds() - start, Measure.cpuSeconds() - cpu, service.statistics)
            try service.close()
            return result
        }
        for _ in 0..<max(1, runs) where failure == nil {
            do {
                for (k, n) in counts.enumerated() {
                    let (wall, cpu, statistics) = try feed(InMemoryGeofencingStore(), shards: n)
                    serviceSamples[k].append(wall)
                    serviceCPU[k].append(cpu)
                    serviceStatistics[k] = statistics
                }
                for (k, n) in sqliteCounts.enumerated() {
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: sqlitePath + suffix) }
                    let (wall, cpu, statistics) = try feed(try SQLiteGeofencingStore(path: sqlitePath), shards: n)
                    sqliteSamples[k].append(wall)
                    sqliteCPU[k].append(cpu)
                    sqliteStatistics[k] = statistics
                }
            } catch {
                failure = "\(error)"
            }
        }
        if let failure {
            report.note("shards: the service run failed: \(failure)")
            return
        }
        let serviceRates = serviceSamples.map { Double(updates.count) / Measure.median($0) }
        for (k, n) in counts.enumerated() {
            report.add(Section.service, "\(n) shard\(n == 1 ? "" : "s")", serviceRates[k], "updates/s",
                       note: String(format: "%.2f× one shard; %.2f× the sharded engine's wall-clock time, %.2f× its CPU time (goal ≤ 1.2×); median of %d",
                                    serviceRates[k] / serviceRates[0], engineRates[k] / serviceRates[k],
                                    Measure.median(serviceCPU[k]) / Measure.median(engineCPU[k]), runs),
                       reference: n == 1, comparedToReference: false)
        }
        for (k, n) in sqliteCounts.enumerated() {
            let e = counts.firstIndex(of: n)!
            let rate = Double(updates.count) / Measure.median(sqliteSamples[k])
            report.add(Section.sqlite, "\(n) shard\(n == 1 ? "" : "s")", rate, "updates/s",
                       note: String(format: "%.2f× the sharded engine's throughput (goal ≥ 0.5×); in CPU time %.2f× (engine CPU ÷ service CPU); one commit per %d updates; median of %d",
                                    rate / engineRates[e], Measure.median(engineCPU[e]) / Measure.median(sqliteCPU[k]), batchSize, runs),
                       reference: n == 1, comparedToReference: false)
        }
        report.check("service with shards: every shard count and store gives the bare engine's counts",
                     passed: (serviceStatistics + sqliteStatistics).allSatisfy { $0?.entries == statistics[0]?.entries && $0?.exits == statistics[0]?.exits },
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

/// Carries the query passes' inputs into `concurrentPerform`: each thread reads the shared parts and
/// fence set and writes only its own result.
private struct UnsafeSendableBench<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
