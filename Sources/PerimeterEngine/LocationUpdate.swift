import Foundation
import PerimeterGeoJSON
import PerimeterGeometry

/// One reported position of one device: the engine's only input.
public struct LocationUpdate: Hashable, Sendable {
    /// The device that reported the position.
    public var device: DeviceID
    /// When the position was measured.
    public var time: Date
    /// Where the device was.
    public var coordinate: Coordinate
    /// Radius of 68 % confidence in metres, if the source reported one.
    public var horizontalAccuracy: Double?
    /// Ground speed in metres per second, if known.
    public var speed: Double?
    /// Course over ground in degrees clockwise from true north, if known.
    public var course: Double?

    /// Creates a location update.
    public init(device: DeviceID, time: Date, coordinate: Coordinate,
                horizontalAccuracy: Double? = nil, speed: Double? = nil, course: Double? = nil) {
        self.device = device
        self.time = time
        self.coordinate = coordinate
        self.horizontalAccuracy = horizontalAccuracy
        self.speed = speed
        self.course = course
    }

    /// Convenience: creates an update from latitude and longitude in degrees.
    public init(device: DeviceID, time: Date, latitude: Double, longitude: Double,
                horizontalAccuracy: Double? = nil, speed: Double? = nil, course: Double? = nil) {
        self.init(device: device, time: time, coordinate: Coordinate(latitude: latitude, longitude: longitude),
                  horizontalAccuracy: horizontalAccuracy, speed: speed, course: course)
    }
}

extension LocationUpdate {
    /// The times an update may carry, in seconds since 1970: from 1970-01-01T00:00:00Z up to (not
    /// including) 2200-01-01T00:00:00Z (docs/server.md, "Update times").
    ///
    /// No position was ever measured by a device before 1970 (a negative Unix time is a bug or an
    /// unset clock), and 2200 leaves room for any real deployment while refusing times in
    /// milliseconds or microseconds read as seconds (a 2025 time in milliseconds is year 55,000), which
    /// would otherwise be accepted and then make every later, correct update of the device out of order.
    public static let acceptedTimes: Range<Double> = 0 ..< 7_258_118_400

    /// Why `seconds` (since 1970) is not an accepted update time, naming the value; `nil` when it is.
    public static func timeProblem(_ seconds: Double) -> String? {
        guard !acceptedTimes.contains(seconds) else { return nil }
        guard seconds.isFinite else { return "time \(seconds) is not a finite number of seconds" }
        // RFC 3339 has four-digit years: 0001-01-01 … 9999-12-31.
        let date = seconds >= -62_135_596_800 && seconds < 253_402_300_800
            ? " (\(RFC3339.string(from: Date(timeIntervalSince1970: seconds))))" : ""
        let hint = acceptedTimes.contains(seconds / 1000) ? "; is it in milliseconds? Send seconds" : ""
        return "time \(seconds) s since 1970\(date) is outside the accepted range 1970-01-01T00:00:00Z to 2200-01-01T00:00:00Z\(hint)"
    }
}
