import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterIndex

/// Scaling curves of Perimeter alone: number of fences, number of devices, vertices per fence.
public struct ScalingBench: Sendable {
    /// The base workload (its fixes and fences are reused).
    public var workload: Workload
    /// Repetitions per point of a curve.
    public var runs: Int
    /// Fixes used by the fence and vertex curves.
    public var fixes: Int
    /// Fence counts of the fence curve.
    public var fenceCounts: [Int]
    /// Device counts of the device curve.
    public var deviceCounts: [Int]
    /// Vertex counts of the vertex curve.
    public var vertexCounts: [Int]

    /// Creates the curves' settings.
    public init(workload: Workload, runs: Int, fixes: Int, fenceCounts: [Int], deviceCounts: [Int], vertexCounts: [Int]) {
        self.workload = workload; self.runs = runs; self.fixes = fixes
        self.fenceCounts = fenceCounts; self.deviceCounts = deviceCounts; self.vertexCounts = vertexCounts
    }

    /// Runs every curve into `report`.
    public func run(into report: inout Report) {
        let fixes = workload.fixes.prefix(self.fixes)
        let updates = EngineBench.updates(fixes)
        report.curves.append(fenceCurve(fixes, updates, &report))
        report.curves.append(deviceCurve(&report))
        report.curves.append(vertexCurve(fixes, updates, &report))
    }

    /// Builds the index and engine over `fences` and measures them on `fixes`.
    private func measure(_ fences: [Fence], _ fixes: Workload.Fixes, _ updates: [LocationUpdate], vertices: Int)
        -> (build: Double, mib: Double, query: Double, engine: Double, pairsPerPoint: Double, bytesPerVertex: Double) {
        let regions = fences.map(\.region)
        let build = Measure.repeated(runs: runs) { RegionIndex(regions: regions) }
        let bytes = Double(build.result.estimatedMemoryBytes)
        let (q, pairs) = EngineBench.timeQueries(build.result, fixes, runs: runs)
        var set = FenceSet(fences)
        set.prepare()
        let e = EngineBench.timeEngine(set, updates, dwell: nil, runs: runs)
        return (build.seconds, bytes / 1_048_576, Double(fixes.count) / q, Double(updates.count) / e.seconds,
                Double(pairs) / Double(max(1, fixes.count)), bytes / Double(max(1, vertices)))
    }

    /// Fences 100 → 1,000,000 at fixed updates: star polygons of 20–60 vertices whose radii shrink as
    /// 1/√n so that coverage (fences per point) stays about constant.
    private func fenceCurve(_ fixes: Workload.Fixes, _ updates: [LocationUpdate], _ report: inout Report) -> Report.Curve {
        var rows: [[Double]] = []
        for n in fenceCounts {
            log("scaling: \(n) fences")
            var p = WorkloadGenerator.Parameters()
            p.seed = 7; p.fences = n; p.large = 0; p.multi = 0; p.holes = 0; p.circles = 0; p.devices = 0
            p.smallVertices = 20...60
            let shrink = (10_000 / Double(n)).squareRoot()
            p.smallRadius = (100 * shrink)...(8_000 * shrink)
            let w = WorkloadGenerator(p).generate()
            let m = measure(EngineBench.fences(w), fixes, updates, vertices: w.vertexCount)
            rows.append([Double(n), Double(w.vertexCount), m.build, m.mib, m.query, m.engine, m.pairsPerPoint])
        }
        return Report.Curve(title: "Scaling: number of fences (\(fixes.count) updates, constant coverage)", xLabel: "fences",
                            columns: ["vertices", "build s", "index MiB", "queries/s", "engine updates/s", "fences per point"],
                            rows: rows, plotted: 5)
    }

    /// Devices 1,000 → 1,000,000 on the workload's fences: heap bytes per device after 5 updates each,
    /// for devices moving around the cities and for idle devices (outside every fence).
    private func deviceCurve(_ report: inout Report) -> Report.Curve {
        var set = FenceSet(EngineBench.fences(workload))
        set.prepare()
        var rows: [[Double]] = []
        for n in deviceCounts {
            log("scaling: \(n) devices")
            var rng = SplitMix64(seed: 99)
            let cities = Cities(&rng)
            let names = (0..<n).map { DeviceID("d\($0)") }
            let starts = (0..<n).map { _ in cities.sampleCentre(&rng, cityProbability: 0.9) }
            func feed(idle: Bool) -> (bytes: Double, rate: Double, inside: Int) {
                let before = Measure.heapBytes()
                var engine = DetectionEngine(fences: set)
                var events: [GeofenceEvent] = []
                let t0 = Measure.cpuSeconds()
                for round in 0..<5 {
                    for d in 0..<n {
                        let s = starts[d]
                        let c = idle ? Coordinate(latitude: -40 - Double(d % 1000) * 0.01, longitude: -140 + Double(round) * 1e-4)
                                     : Coordinate(latitude: s.latitude + Double(round) * 1e-4, longitude: s.longitude)
                        engine.process(LocationUpdate(device: names[d], time: Date(timeIntervalSince1970: 1e9 + Double(round)), coordinate: c),
                                       into: &events)
                        events.removeAll(keepingCapacity: true)
                    }
                }
                let seconds = Measure.cpuSeconds() - t0
                let bytes = Double(Measure.heapBytes() - before) / Double(n)
                let inside = engine.statistics.entries - engine.statistics.exits
                withExtendedLifetime(engine) {}
                return (bytes, Double(5 * n) / seconds, inside)
            }
            let moving = feed(idle: false)
            let idle = feed(idle: true)
            rows.append([Double(n), moving.bytes, idle.bytes, Double(moving.inside) / Double(n), moving.rate])
        }
        return Report.Curve(title: "Scaling: number of devices (\(workload.fences.count) fences, 5 updates per device)",
                            xLabel: "devices",
                            columns: ["heap B/device", "idle heap B/device", "fences inside per device", "updates/s"],
                            rows: rows, plotted: 1)
    }

    /// Vertices per fence 10 → 100,000: 100 star polygons of 2–20 km radius around the cities.
    private func vertexCurve(_ fixes: Workload.Fixes, _ updates: [LocationUpdate], _ report: inout Report) -> Report.Curve {
        var rows: [[Double]] = []
        for v in vertexCounts {
            log("scaling: \(v) vertices per fence")
            var p = WorkloadGenerator.Parameters()
            p.seed = 11; p.fences = 100; p.large = 0; p.multi = 0; p.holes = 0; p.circles = 0; p.devices = 0
            p.smallVertices = v...v
            p.smallRadius = 2_000...20_000
            let w = WorkloadGenerator(p).generate()
            let m = measure(EngineBench.fences(w), fixes, updates, vertices: w.vertexCount)
            rows.append([Double(v), m.build, m.mib, m.bytesPerVertex, m.query, m.engine])
        }
        return Report.Curve(title: "Scaling: vertices per fence (100 fences, \(fixes.count) updates)", xLabel: "vertices per fence",
                            columns: ["build s", "index MiB", "index B/vertex", "queries/s", "engine updates/s"],
                            rows: rows, plotted: 5)
    }
}
