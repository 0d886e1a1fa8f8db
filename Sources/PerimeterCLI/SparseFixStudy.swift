import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTracks

/// The sparse-fix study: one drive at 1 s (the truth) and the same drive sampled every 60 s, through
/// small circular fences along the route (docs/studies.md).
enum SparseFixStudy {
    /// What the study measured.
    struct Result: Sendable {
        var fixes: Int
        var sparseFixes: Int
        var interval: Double
        var fences: Int
        /// Fences the 1 s track visits.
        var visited: Int
        /// Of those, fences without any entry at the sparse rate.
        var missed: Int
        /// Of the missed, fences with a `cross` event when crossings are on.
        var recovered: Int
        /// Cross events in fences the truth never visited.
        var falseCrossings: Int
        /// Mean absolute error of the crossing time against the true entry, seconds.
        var crossingError: Double
        /// Entry/exit timing against the truth for visits seen at both rates, seconds.
        var entryError: Error, exitError: Error, interpolatedEntryError: Error, interpolatedExitError: Error
    }

    /// Mean and largest absolute error over `count` visits.
    struct Error: Sendable {
        var count = 0, mean = 0.0, maximum = 0.0

        init(_ values: [Double]) {
            count = values.count
            mean = values.isEmpty ? 0 : values.map(abs).reduce(0, +) / Double(values.count)
            maximum = values.map(abs).max() ?? 0
        }
    }

    static let track = "/tracks/gpx/devices/sbn-v13.gpx"

    /// Runs the study on the drive below `fixtures`.
    static func run(fixtures: String, interval: Double = 60, spacing: Double = 400, radius: Double = 40) throws -> Result {
        let truth = try NoiseStudy.read(fixtures + track, device: "drive")
        var sparse: [LocationUpdate] = []
        for u in truth where sparse.last.map({ u.time.timeIntervalSince($0.time) >= interval }) ?? true { sparse.append(u) }

        // A circle every `spacing` metres of path, alternately centred on the route and 20 or 32 m beside it.
        var fences: [Fence] = []
        var travelled = 0.0, next = spacing / 2
        let offsets = [0.0, 20, 32]
        for (a, b) in zip(truth, truth.dropFirst()) {
            travelled += Geodesic.wgs84.distance(from: a.coordinate, to: b.coordinate)
            guard travelled >= next else { continue }
            next += spacing
            let shift = offsets[fences.count % offsets.count] / 111_132
            let centre = Coordinate(latitude: b.coordinate.latitude + shift, longitude: b.coordinate.longitude)
            fences.append(Fence(id: FenceID(String(format: "c%03d", fences.count)), region: Region(.circle(center: centre, radius: radius))))
        }

        func run(_ updates: [LocationUpdate], _ options: DetectionOptions) -> [GeofenceEvent] {
            var engine = DetectionEngine(fences: fences, configuration: .init(options: options))
            return engine.replay(updates).events
        }
        func first(_ kind: GeofenceEventKind, _ events: [GeofenceEvent]) -> [FenceID: Double] {
            var result: [FenceID: Double] = [:]
            for e in events where e.kind == kind && result[e.fence] == nil { result[e.fence] = e.time.timeIntervalSince1970 }
            return result
        }
        let truthEvents = run(truth, DetectionOptions())
        let plain = run(sparse, DetectionOptions())
        let crossing = run(sparse, .init(crossings: true, maximumGap: interval * 1.5))
        let interpolated = run(sparse, .init(interpolate: true, maximumGap: interval * 1.5))

        let trueEntries = first(.entry, truthEvents), trueExits = first(.exit, truthEvents)
        let plainEntries = first(.entry, plain), plainExits = first(.exit, plain)
        let crosses = first(.cross, crossing)
        let missed = trueEntries.keys.filter { plainEntries[$0] == nil }
        let recovered = missed.filter { crosses[$0] != nil }
        func errors(_ estimate: [FenceID: Double], _ truth: [FenceID: Double]) -> Error {
            Error(estimate.compactMap { fence, t in truth[fence].map { t - $0 } })
        }
        return Result(
            fixes: truth.count, sparseFixes: sparse.count, interval: interval, fences: fences.count,
            visited: trueEntries.count, missed: missed.count, recovered: recovered.count,
            falseCrossings: crosses.keys.filter { trueEntries[$0] == nil }.count,
            crossingError: Error(recovered.compactMap { f in crosses[f].flatMap { c in trueEntries[f].map { c - $0 } } }).mean,
            entryError: errors(plainEntries, trueEntries), exitError: errors(plainExits, trueExits),
            interpolatedEntryError: errors(first(.entry, interpolated), trueEntries),
            interpolatedExitError: errors(first(.exit, interpolated), trueExits))
    }

    /// The results as Markdown.
    static func markdown(_ r: Result) -> String {
        func f(_ x: Double) -> String { String(format: "%.1f", x) }
        return """
        # Sparse-fix study

        One drive (`sbn-v13.gpx`, \(r.fixes) fixes at about 1 s) and the same drive keeping one fix every \(Int(r.interval)) s \
        (\(r.sparseFixes) fixes), through \(r.fences) circles of 40 m radius placed every 400 m of route, centred on it \
        or 20 m or 32 m beside it. The 1 s run is the truth.

        | measure | value |
        |---|---:|
        | fences visited at 1 s | \(r.visited) |
        | of these, missed at \(Int(r.interval)) s (no entry) | \(r.missed) |
        | missed visits recovered as `cross` events | \(r.recovered) |
        | `cross` events in fences never visited | \(r.falseCrossings) |
        | mean error of the crossing time vs the true entry | \(f(r.crossingError)) s |

        | timing vs 1 s truth | visits | mean abs error | max abs error |
        |---|---:|---:|---:|
        | entry, observed time | \(r.entryError.count) | \(f(r.entryError.mean)) s | \(f(r.entryError.maximum)) s |
        | entry, interpolated | \(r.interpolatedEntryError.count) | \(f(r.interpolatedEntryError.mean)) s | \(f(r.interpolatedEntryError.maximum)) s |
        | exit, observed time | \(r.exitError.count) | \(f(r.exitError.mean)) s | \(f(r.exitError.maximum)) s |
        | exit, interpolated | \(r.interpolatedExitError.count) | \(f(r.interpolatedExitError.mean)) s | \(f(r.interpolatedExitError.maximum)) s |

        """
    }
}
