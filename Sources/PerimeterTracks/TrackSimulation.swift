import Foundation
import PerimeterEngine
import PerimeterGeometry

/// Timing for tracks that have none: move along the path at a constant speed from a start time and
/// report a position every `interval` seconds.
///
/// Positions are interpolated along the straight lon/lat segments between vertices (RFC 7946); the time
/// spent on each segment is its geodesic length (WGS84) divided by the speed. Updates come at
/// `start + k·interval` for k = 0, 1, …, plus one at the last vertex when the path does not end exactly on
/// a tick. Each update carries the speed and the segment's initial course.
public struct TrackSimulation: Hashable, Sendable {
    /// Speed along the path in metres per second (> 0).
    public let speed: Double
    /// Seconds between two updates (> 0).
    public let interval: TimeInterval
    /// Time of the first update (at the first vertex).
    public let start: Date

    /// The most updates one simulation may produce before it is refused as a likely mistake.
    public static let maximumUpdates = 50_000_000

    /// Creates a simulation; `nil` unless `speed` and `interval` are finite and positive.
    public init?(speed: Double, interval: TimeInterval = 1, start: Date = Date(timeIntervalSince1970: 0)) {
        guard speed.isFinite, speed > 0, interval.isFinite, interval > 0 else { return nil }
        self.speed = speed
        self.interval = interval
        self.start = start
    }

    /// Simulated updates along `path` for `device`.
    /// - Throws: ``TrackProblem`` (source `source`) when the path is too long for the speed and interval
    ///   (more than ``maximumUpdates`` updates) or a coordinate is not finite.
    /// - Complexity: O(vertices + updates).
    public func simulate(path: [Coordinate], device: DeviceID, source: String = "simulation") throws -> [LocationUpdate] {
        guard let first = path.first else { return [] }
        for (index, c) in path.enumerated() where !c.latitude.isFinite || !c.longitude.isFinite {
            throw TrackProblem(source: source, message: "vertex \(index) of the path has a coordinate that is not a finite number")
        }
        var lengths = [Double]()
        lengths.reserveCapacity(path.count)
        var total = 0.0
        for k in 1..<max(1, path.count) {
            let length = Geodesic.wgs84.distance(from: path[k - 1], to: path[k])
            let safe = length.isFinite ? length : 0
            lengths.append(safe)
            total += safe
        }
        let duration = total / speed
        let expected = duration / interval + 2
        guard expected <= Double(Self.maximumUpdates) else {
            throw TrackProblem(source: source, message:
                "simulating \(Int(total)) m at \(speed) m/s every \(interval) s would give more than \(Self.maximumUpdates) updates")
        }
        var updates = [LocationUpdate]()
        updates.reserveCapacity(Int(expected))
        var tick = 0
        var segmentStart = 0.0
        var lastCourse: Double? = nil
        for k in 1..<max(1, path.count) where path.count > 1 {
            let a = path[k - 1], b = path[k]
            let segmentDuration = lengths[k - 1] / speed
            let segmentEnd = segmentStart + segmentDuration
            let course = Self.course(from: a, to: b)
            if lengths[k - 1] > 0 { lastCourse = course }
            while Double(tick) * interval <= segmentEnd {
                let t = Double(tick) * interval
                let f = segmentDuration > 0 ? min(1, max(0, (t - segmentStart) / segmentDuration)) : 0
                let position = Coordinate(latitude: a.latitude + f * (b.latitude - a.latitude),
                                          longitude: a.longitude + f * (b.longitude - a.longitude))
                updates.append(LocationUpdate(device: device, time: start.addingTimeInterval(t), coordinate: position,
                                              speed: speed, course: lengths[k - 1] > 0 ? course : lastCourse))
                tick += 1
            }
            segmentStart = segmentEnd
        }
        if path.count == 1 {
            updates.append(LocationUpdate(device: device, time: start, coordinate: first, speed: speed))
        } else if let last = updates.last, last.time.timeIntervalSince(start) < duration - 1e-6 {
            updates.append(LocationUpdate(device: device, time: start.addingTimeInterval(duration),
                                          coordinate: path[path.count - 1], speed: speed, course: lastCourse))
        }
        return updates
    }

    /// Re-times existing updates: their positions (in order) become the path, their times are replaced
    /// by simulated ones. The device is that of the first update.
    /// - Complexity: O(updates in + updates out).
    public func simulate(_ updates: [LocationUpdate], source: String = "simulation") throws -> [LocationUpdate] {
        guard let first = updates.first else { return [] }
        return try simulate(path: updates.map(\.coordinate), device: first.device, source: source)
    }

    /// Initial course (degrees clockwise from north, 0..<360) from `a` to `b` on the sphere.
    static func course(from a: Coordinate, to b: Coordinate) -> Double {
        let d2r = Double.pi / 180
        let phi1 = a.latitude * d2r, phi2 = b.latitude * d2r, dLambda = (b.longitude - a.longitude) * d2r
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        let degrees = atan2(y, x) / d2r
        let normalised = degrees < 0 ? degrees + 360 : degrees
        return normalised >= 360 ? 0 : normalised
    }
}
