import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterTracks

/// The built-in demo as data: its fences, the van's simulated drive and the events an offline replay
/// of that drive produces (including the dwell that falls due while the van is parked at the depot).
///
/// Both demo modes use it: `perimeter demo` prints ``events``; `perimeter demo --serve` drives the same
/// route through a running server and compares what the server reports with ``events``.
struct DemoScenario {
    /// The demo's fences, loaded from ``DemoData/fences``.
    let fences: [Fence]
    /// The van's updates, one per simulated second, starting at the scenario's start time.
    let updates: [LocationUpdate]
    /// The events of an offline replay of ``updates`` followed by ``DemoData/parked`` seconds parked.
    let events: [GeofenceEvent]
    /// Driving speed in metres per second.
    let speed: Double

    /// The fixed start of the offline demo, `2026-06-01T08:00:00Z`.
    static var fixedStart: Date {
        guard let start = RFC3339.date(from: DemoData.start) else { preconditionFailure("DemoData.start is not RFC 3339") }
        return start
    }

    /// Loads the fences, simulates the drive at `speed` from `start` and replays it.
    /// - Throws: ``CommandLineError`` when the built-in data does not load or `speed` cannot be simulated.
    /// - Complexity: O(updates · fences touched per update), about a millisecond for the default speed.
    init(speed: Double, start: Date = DemoScenario.fixedStart) throws {
        let read = GeoJSONReader().read(Array(DemoData.fences.utf8))
        guard let object = read.object, !read.hasErrors else {
            throw CommandLineError.data("the built-in demo fences do not load: \(read.problems.first.map { "\($0)" } ?? "no object")")
        }
        let loaded = FenceLoader().load(object)
        guard !loaded.hasErrors else {
            throw CommandLineError.data("the built-in demo fences do not load: \(loaded.problems[0])")
        }
        guard let simulation = TrackSimulation(speed: speed, start: start) else {
            throw CommandLineError.usage("demo: cannot simulate a drive at \(speed) m/s")
        }
        let updates = try TrackReader(format: .geojson, device: DeviceID(DemoData.device), simulation: simulation)
            .read(Array(DemoData.route.utf8), source: "demo-route.geojson").updates
        guard let last = updates.last else { throw CommandLineError.data("the built-in demo route is empty") }

        var engine = DetectionEngine(fences: loaded.fences)
        var events = engine.replay(updates).events
        // The van parks at the depot: time passes without updates, and the depot's dwell falls due.
        engine.advance(to: last.time.addingTimeInterval(DemoData.parked), into: &events)

        self.fences = loaded.fences
        self.updates = updates
        self.events = events
        self.speed = speed
    }

    /// Simulated seconds from the first update to the last.
    var driveDuration: TimeInterval {
        guard let first = updates.first, let last = updates.last else { return 0 }
        return last.time.timeIntervalSince(first.time)
    }

    /// `Perimeter demo: van-7 drives 877 s through 7 areas at 43 km/h, then parks for 10 min.` without the
    /// leading words, for both modes' headers.
    var description: String {
        "\(DemoData.device) drives \(updates.count) s through \(fences.count) areas at \(Self.kmh(speed)) km/h, then parks for \(Int(DemoData.parked / 60)) min"
    }

    /// Kilometres per hour, rounded, as text.
    static func kmh(_ metresPerSecond: Double) -> String {
        String(format: "%.0f", metresPerSecond * 3.6)
    }
}
