import Foundation
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
