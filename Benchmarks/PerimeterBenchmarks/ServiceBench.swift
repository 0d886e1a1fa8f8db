import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import PerimeterSQLite

/// The `GeofencingService` on the workload: with the in-memory store (the cost of the service layer over
/// the bare engine) and with the SQLite store (the cost of durability), updates in batches as a server
/// would receive them.
public struct ServiceBench: Sendable {
    /// Section name.
    public static let section = "GeofencingService (batches of 10,000 updates)"

    /// The workload.
    public var workload: Workload
    /// Repetitions per figure (the median is reported).
    public var runs: Int
    /// Where the SQLite files go.
    public var workDirectory: URL
    /// Updates per `process` call (one durable commit each).
    public var batchSize = 10_000

    /// Creates the benchmark.
    public init(workload: Workload, runs: Int, workDirectory: URL) {
        self.workload = workload
        self.runs = runs
        self.workDirectory = workDirectory
    }

    /// The workload's polygon fences as GeoJSON features, as a service receives them.
    static func features(_ workload: Workload) -> [GeoJSON.Feature] {
        workload.fences.enumerated().map { i, fence in
            let polygons = fence.polygons.map { rings in
                rings.map { ring in ring.map { GeoJSON.Position(longitude: $0.longitude, latitude: $0.latitude) } }
            }
            return GeoJSON.Feature(id: .string(String(i)), geometry: .multiPolygon(GeoJSON.MultiPolygon(polygons)))
        }
    }

    /// The stores ``run(engineUpdatesPerSecond:entries:exits:into:)`` times: all three unless
    /// `PERIMETER_BENCH_SERVICE_STORES` names some (`memory`, `sqlite`: the store's defaults, `sqlite-serve`:
    /// the store as `perimeter serve` opens it, exclusive with a 10,000-page log) — for instruction counts
    /// of one store under callgrind (docs/benchmarks.md, "Session 12 — service").
    static var stores: Set<String> {
        let all: Set<String> = ["memory", "sqlite", "sqlite-serve"]
        guard let chosen = ProcessInfo.processInfo.environment["PERIMETER_BENCH_SERVICE_STORES"] else { return all }
        return all.intersection(chosen.split(separator: ",").map(String.init))
    }

    /// The SQLite file's path, its files removed.
    func freshPath() -> String {
        let path = workDirectory.appendingPathComponent("service-bench.sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        return path
    }

    /// Runs the stores; `engineUpdatesPerSecond` is the bare engine's figure from the same run, and
    /// `entries`/`exits` its counts, which the service must reproduce.

    public func run(engineUpdatesPerSecond: Double, entries: Int, exits: Int, into report: inout Report) {
        let features = Self.features(workload)
        let updates = EngineBench.updates(workload.fixes)
        let stores = Self.stores
        for (key, name, makeStore) in [
            ("memory", "in-memory store", { () throws -> any GeofencingStore in InMemoryGeofencingStore() }),
            ("sqlite", "SQLite store (WAL, one commit per batch)", { () throws -> any GeofencingStore in
                try SQLiteGeofencingStore(path: freshPath())
            }),
            ("sqlite-serve", "SQLite store as perimeter serve opens it (exclusive, 10,000-page log)", { () throws -> any GeofencingStore in
                try SQLiteGeofencingStore(path: freshPath(), lockingMode: .exclusive, checkpointPages: 10_000)
            }),
        ] as [(String, String, () throws -> any GeofencingStore)] where stores.contains(key) {
            log("service: \(name), \(updates.count) updates in batches of \(batchSize)")
            var samples: [Double] = []
            var cpuSamples: [Double] = []
            var statistics: DetectionEngine.Statistics?
            var failure: String?
            for _ in 0..<max(1, runs) {
                do {
                    // The data clock, as the engine it is compared with (and no ticker thread in the way).
                    let service = GeofencingService(store: try makeStore(), tickInterval: nil)
                    try service.configure(GeofencingOptions(timeModel: .data))
                    try service.addFeatures(features)
                    // CPU time for the in-memory store (comparable with the engine's figure); wall-clock time
                    // for SQLite, whose cost includes waiting for the disk (its CPU time in the note).
                    let useCPU = name.hasPrefix("in-memory")
                    func clock() -> Double { useCPU ? Measure.cpuSeconds() : Measure.wallSeconds() }
                    let start = clock(), cpuStart = Measure.cpuSeconds()
                    var offset = 0
                    while offset < updates.count {
                        let end = min(offset + batchSize, updates.count)
                        _ = try service.process(updates[offset..<end])
                        offset = end
                    }
                    try service.flush()
                    samples.append(clock() - start)
                    cpuSamples.append(Measure.cpuSeconds() - cpuStart)
                    statistics = service.statistics
                    try service.close()
                } catch {
                    failure = "\(error)"
                    break
                }
            }
            if let failure {
                report.check("service (\(name)) runs the workload", passed: false, failure)
                continue
            }
            let perSecond = Double(updates.count) / Measure.median(samples)
            report.add(Self.section, "Perimeter GeofencingService, \(name)", perSecond, "updates/s",
                       note: String(format: "%.2f× the bare engine's time", engineUpdatesPerSecond / perSecond)
                        + (name.hasPrefix("in-memory") ? "; CPU time" : String(
                            format: "; wall clock (CPU time %.2f×)",
                            engineUpdatesPerSecond * Measure.median(cpuSamples) / Double(updates.count)))
                        + ", median of \(samples.count)",
                       reference: name.hasPrefix("in-memory"))
            report.check("service (\(name)) entry/exit counts equal the engine's",
                         passed: statistics?.entries == entries && statistics?.exits == exits,
                         "service \(statistics?.entries ?? -1) / \(statistics?.exits ?? -1), engine \(entries) / \(exits)")
        }
    }
}
