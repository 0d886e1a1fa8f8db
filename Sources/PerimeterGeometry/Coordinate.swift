/// A position on the WGS84 ellipsoid, in decimal degrees.
///
/// Perimeter works in the plane of longitude and latitude for areas (RFC 7946 §3.1.1: an edge is the
/// straight line between two positions in that plane) and on the ellipsoid for distances in metres.
/// `x` is longitude and `y` is latitude wherever planar arithmetic is done.
public struct Coordinate: Hashable, Sendable {
    /// Latitude in degrees, positive north, within −90…90 for valid input.
    public var latitude: Double
    /// Longitude in degrees, positive east, normally within −180…180.
    public var longitude: Double

    /// Creates a coordinate from latitude and longitude in degrees.
    @inlinable
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

extension Coordinate: CustomStringConvertible {
    /// `(lat, lon)` with the full precision of both values.
    public var description: String { "(\(latitude), \(longitude))" }
}
