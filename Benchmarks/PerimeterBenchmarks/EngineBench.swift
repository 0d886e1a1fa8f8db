import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterIndex

/// Perimeter's own figures on a workload: index build, bare point queries, the engine with entry/exit
/// tracking and with dwell on. Also yields the (fix, fence) pairs every peer must reproduce.
public struct EngineBench: Sendable {
    /// Section names shared with the peers, so their figures land in the same tables.
    public enum Section {
        /// Index build time.
        public static let build = "Index build"
        /// Index memory.
        public static let memory = "Index memory"
        /// Bare point-in-fence queries.
        public static let query = "Point-in-fence queries (no events)"
        /// Queries plus per-device entry/exit tracking.
        public static let engine = "Engine with entry/exit tracking"
        /// Engine with dwell on.
        public static let dwell = "Engine with dwell on"
        /// Circle fences.
        public static let circles = "Circle fences (geodesic radius)"
        /// Per-device state of the engine.
        public static let deviceMemory = "Engine memory per device"
    }

    /// The workload.
    public var workload: Workload
    /// Repetitions per figure (the median is reported).
    public var runs: Int
    /// Dwell time for the dwell run, seconds.
    public var dwell: Double = 60

    /// Creates the benchmark.
    public init(workload: Workload, runs: Int) {
        self.workload = workload
        self.runs = runs
    }

    /// The passes ``run(into:)`` times: all of them unless `PERIMETER_BENCH_ENGINE_PASSES` names some
    /// (comma-separated: `queries`, `batch`, `handles`, `single`, `dwell`, `memory`) — for instruction counts of one
    /// pass under callgrind (docs/benchmarks.md, "Session 10 — engine"). The batch pass always runs once:
    /// the agreement checks read its counts.
    static var passes: Set<String> {
        let all: Set<String> = ["queries", "batch", "handles", "single", "dwell", "memory"]
        guard let chosen = ProcessInfo.processInfo.environment["PERIMETER_BENCH_ENGINE_PASSES"] else { return all }
        return all.intersection(chosen.split(separator: ",").map(String.init))
    }

    /// The polygon fences as engine fences (id = fence number).
    public static func fences(_ workload: Workload) -> [Fence] {
        workload.fences.enumerated().map { i, f in
            Fence(id: FenceID(String(i)), region: Region(.polygons(f.polygons.map { Polygon(rings: $0) })))
        }
    }

    /// The circle fences as engine fences.
    public static func circleFences(_ workload: Workload) -> [Fence] {
        workload.circles.enumerated().map { i, c in
            Fence(id: FenceID(String(i)), region: Region(.circle(center: c.center, radius: c.radius)))
        }
    }

    /// The fixes as engine updates (device ids `d<n>`).
    public static func updates(_ fixes: Workload.Fixes) -> [LocationUpdate] {
        let names = (0..<max(1, fixes.deviceCount)).map { DeviceID("d\($0)") }
        return (0..<fixes.count).map { i in
            LocationUpdate(device: names[Int(fixes.device[i])], time: Date(timeIntervalSince1970: fixes.time[i]),
                           latitude: fixes.latitude[i], longitude: fixes.longitude[i])
        }
    }

    /// The pairs found by the index for every fix.
    public static func pairs(_ index: RegionIndex, _ fixes: Workload.Fixes) -> PairList {
        var list = PairList()
        var hits = RegionBuffer()
        for i in 0..<fixes.count {
            index.regions(containing: Coordinate(latitude: fixes.latitude[i], longitude: fixes.longitude[i]), into: &hits)
            for h in hits { list.append(fix: UInt32(i), fence: UInt32(h)) }
        }
        return list
    }

    /// Median CPU seconds of a bare query pass, and the number of pairs. With `readAhead`, each query
    /// reads ahead the index memory of the next ones (``RegionIndex/readAhead(_:step:)``; the engine does not).
    static func timeQueries(_ index: RegionIndex, _ fixes: Workload.Fixes, runs: Int, readAhead: Bool = true) -> (Double, Int) {
        var hits = RegionBuffer(capacity: 64)
        let n = fixes.count
        func point(_ i: Int) -> Coordinate { Coordinate(latitude: fixes.latitude[i], longitude: fixes.longitude[i]) }
        let r = Measure.repeated(runs: runs) { () -> Int in
            var total = 0
            var sink: UInt64 = 0
            for i in 0..<n {
                if readAhead {
                    if i + 3 < n { sink &+= index.readAhead(point(i + 3), step: 0) }
                    if i + 2 < n { sink &+= index.readAhead(point(i + 2), step: 1) }
                    if i + 1 < n { sink &+= index.readAhead(point(i + 1), step: 2) }
                }
                index.regions(containing: point(i), into: &hits)
                total &+= hits.count
            }
            if sink == 0x5EED_5EED_5EED_5EED { log("read-ahead sink hit its marker") }  // keeps the reads
            return total
        }
        return (r.seconds, r.result)
    }

    /// Median CPU seconds of feeding every update through a fresh engine, and its statistics.
    /// With `batches`, the updates go in batches of 1,000 (``DetectionEngine/process(contentsOf:into:)``);
    /// without, one ``DetectionEngine/process(_:into:)`` call each.
    /// With `handles` (each update's device number, as in ``Workload/Fixes/device``), every update goes
    /// through ``DetectionEngine/process(_:handle:into:)`` with one ``DeviceHandle`` per device, kept
    /// across batches as a client would keep it.
    public static func timeEngine(_ fenceSet: FenceSet, _ updates: [LocationUpdate], dwell: Double?, runs: Int,
                                  batches: Bool = true, handles deviceNumbers: [Int32]? = nil)
        -> (seconds: Double, statistics: DetectionEngine.Statistics) {
        let configuration = DetectionEngine.Configuration(defaultDwellTime: dwell)
        let batchSize = 1_000
        let batchList = batches
            ? stride(from: 0, to: updates.count, by: batchSize).map { Array(updates[$0 ..< min($0 + batchSize, updates.count)]) }
            : []
        let r = Measure.repeated(runs: runs) { () -> DetectionEngine.Statistics in
            var engine = DetectionEngine(fences: fenceSet, configuration: configuration)
            var events: [GeofenceEvent] = []
            events.reserveCapacity(64)
            if let deviceNumbers {
                var handles = Array(repeating: DeviceHandle(), count: Int(deviceNumbers.max() ?? 0) + 1)
                for start in stride(from: 0, to: updates.count, by: batchSize) {
                    engine.prepareIndex()
                    for i in start ..< min(start + batchSize, updates.count) {
                        engine.process(updates[i], handle: &handles[Int(deviceNumbers[i])], into: &events)
                    }
                    events.removeAll(keepingCapacity: true)
                }
            } else if batches {
                for batch in batchList {
                    engine.process(contentsOf: batch, into: &events)
                    events.removeAll(keepingCapacity: true)
                }
            } else {
                for u in updates {
                    engine.process(u, into: &events)
                    events.removeAll(keepingCapacity: true)
                }
            }
            return engine.statistics
        }
        return (r.seconds, r.result)
    }

    /// Runs the polygon benchmarks; returns Perimeter's pairs and entry/exit counts.
    public func run(into report: inout Report) -> (pairs: PairList, entries: Int, exits: Int) {
        let fixes = workload.fixes
        let fences = Self.fences(workload)
        let regions = fences.map(\.region)
        let vertices = workload.vertexCount
        log("index build: \(fences.count) fences, \(vertices) vertices")
        let build = Measure.repeated(runs: runs) { RegionIndex(regions: regions) }
        let index = build.result
        let stats = index.statistics
        report.add(Section.build, "Perimeter RegionIndex", build.seconds, "s", higherIsBetter: false,
                   note: "\(fences.count) fences, \(vertices) vertices; median of \(runs)", reference: true)
        report.add(Section.memory, "Perimeter RegionIndex", Double(stats.estimatedMemoryBytes) / 1_048_576, "MiB",
                   higherIsBetter: false,
                   note: String(format: "%d×%d cells of %.4f°, %d entries, %d edge copies in %d chains; %.1f B/vertex",
                                stats.columns, stats.rows, stats.cellSide, stats.entries, stats.edgeCopies, stats.edgeChains,
                                Double(stats.estimatedMemoryBytes) / Double(max(1, vertices))),
                   reference: true)

        let pairs = Self.pairs(index, fixes)
        let passes = Self.passes
        if passes.contains("queries") {
            // One query at a time is the reference, as the engine queries; reading ahead is kept as a
            // second figure because it was measured slower on a quiet machine (docs/benchmarks.md).
            let (singleSeconds, total) = Self.timeQueries(index, fixes, runs: runs, readAhead: false)
            report.add(Section.query, "Perimeter RegionIndex", Double(fixes.count) / singleSeconds, "points/s",
                       note: "\(fixes.count) points, \(total) pairs, one query at a time; median of \(runs)", reference: true)
            let (aheadSeconds, _) = Self.timeQueries(index, fixes, runs: runs)
            report.add(Section.query, "Perimeter RegionIndex, reading 3 queries ahead", Double(fixes.count) / aheadSeconds,
                       "points/s", note: "RegionIndex.readAhead; median of \(runs)")
        }

        let updates = Self.updates(fixes)
        var fenceSet = FenceSet(fences)
        fenceSet.prepare()
        log("engine: \(updates.count) updates")
        let plain = Self.timeEngine(fenceSet, updates, dwell: nil, runs: passes.contains("batch") ? runs : 1)
        report.add(Section.engine, "Perimeter DetectionEngine", Double(updates.count) / plain.seconds, "updates/s",
                   note: "\(plain.statistics.entries) entries, \(plain.statistics.exits) exits; batches of 1,000; median of \(runs)",
                   reference: true)
        if passes.contains("handles") {
            let handled = Self.timeEngine(fenceSet, updates, dwell: nil, runs: runs, handles: fixes.device.map { Int32($0) })
            report.add(Section.engine, "Perimeter DetectionEngine, device handles", Double(updates.count) / handled.seconds,
                       "updates/s", note: "process(_:handle:into:), one DeviceHandle per device, batches of 1,000; "
                        + "\(handled.statistics.entries) entries, \(handled.statistics.exits) exits; median of \(runs)")
            report.check("engine with device handles vs by id", passed: handled.statistics == plain.statistics,
                         "by id \(plain.statistics.entries) / \(plain.statistics.exits), with handles \(handled.statistics.entries) / \(handled.statistics.exits)")
        }
        if passes.contains("single") {
            let single = Self.timeEngine(fenceSet, updates, dwell: nil, runs: runs, batches: false)
            report.add(Section.engine, "Perimeter DetectionEngine, one call per update", Double(updates.count) / single.seconds,
                       "updates/s", note: "process(_:into:) per update; median of \(runs)")
        }
        let withDwell = passes.contains("dwell") ? Self.timeEngine(fenceSet, updates, dwell: dwell, runs: runs) : plain
        if passes.contains("dwell") {
            report.add(Section.dwell, "Perimeter DetectionEngine, dwell \(Int(dwell)) s", Double(updates.count) / withDwell.seconds,
                       "updates/s", note: "\(withDwell.statistics.dwells) dwells; median of \(runs)", reference: true)
        }

        if passes.contains("memory") { Self.reportDeviceMemory(fenceSet, updates, into: &report) }

        let expected = pairs.eventCounts(devices: fixes.device)
        report.check("engine entry/exit counts vs the index's pairs",
                     passed: expected.entries == plain.statistics.entries && expected.exits == plain.statistics.exits
                        && plain.statistics.entries == withDwell.statistics.entries
                        && plain.statistics.exits == withDwell.statistics.exits,
                     "pairs imply \(expected.entries) entries / \(expected.exits) exits; engine \(plain.statistics.entries) / \(plain.statistics.exits), with dwell \(withDwell.statistics.entries) / \(withDwell.statistics.exits)")
        return (pairs, plain.statistics.entries, plain.statistics.exits)
    }

    /// The engine's per-device memory (``DetectionEngine/deviceMemory``): after the workload, and for a
    /// million idle devices (one update each, no fence).
    static func reportDeviceMemory(_ fenceSet: FenceSet, _ updates: [LocationUpdate], into report: inout Report) {
        var engine = DetectionEngine(fences: fenceSet)
        var events: [GeofenceEvent] = []
        engine.process(contentsOf: updates, into: &events)
        let after = engine.deviceMemory
        let memberships = engine.knownDevices.reduce(0) { $0 + engine.presence(of: $1).count }
        report.add(Section.deviceMemory, "idle device (state + device table), workload's devices", after.idleDeviceBytes, "B",
                   higherIsBetter: false,
                   note: "\(after.devices) devices; fixed \(after.fixedBytes) B; record + table share \(Report.format(after.recordBytes)) B",
                   reference: true)
        report.add(Section.deviceMemory, "fence lists after the workload", Double(after.presenceBytes) / Double(max(1, after.devices)),
                   "B/device", higherIsBetter: false,
                   note: "\(memberships) memberships in \(after.presenceBytes) B (the presence pool: block headers, free blocks and spare capacity included)",
                   comparedToReference: false)
        var idle = DetectionEngine()
        let count = 1_000_000
        for i in 0..<count {
            idle.process(LocationUpdate(device: DeviceID("idle-\(i)"), time: Date(timeIntervalSince1970: 1_700_000_000),
                                        latitude: 0, longitude: 0), into: &events)
        }
        let m = idle.deviceMemory
        report.add(Section.deviceMemory, "idle device (state + device table), 1,000,000 devices", m.idleDeviceBytes, "B",
                   higherIsBetter: false,
                   note: "fixed \(m.fixedBytes) B; record + table share \(Report.format(m.recordBytes)) B; presence \(m.presenceBytes) B; ids \(m.idBytes) B",
                   comparedToReference: false)
    }

    /// Runs the circle-fence benchmark (same fixes); returns Perimeter's pairs.
    public func runCircles(into report: inout Report) -> PairList {
        let fences = Self.circleFences(workload)
        guard !fences.isEmpty else { return PairList() }
        let index = RegionIndex(regions: fences.map(\.region))
        let pairs = Self.pairs(index, workload.fixes)
        let updates = Self.updates(workload.fixes)
        var fenceSet = FenceSet(fences)
        fenceSet.prepare()
        let r = Self.timeEngine(fenceSet, updates, dwell: nil, runs: runs)
        report.add(Section.circles, "Perimeter DetectionEngine", Double(updates.count) / r.seconds, "updates/s",
                   note: "\(fences.count) circles, \(pairs.count) pairs, \(r.statistics.entries) entries; median of \(runs)",
                   reference: true)
        let expected = pairs.eventCounts(devices: workload.fixes.device)
        report.check("circle engine entry/exit counts vs the index's pairs",
                     passed: expected.entries == r.statistics.entries && expected.exits == r.statistics.exits,
                     "pairs imply \(expected.entries) / \(expected.exits); engine \(r.statistics.entries) / \(r.statistics.exits)")
        return pairs
    }
}
