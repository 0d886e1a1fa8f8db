// PLACEHOLDER (to be replaced by the geometry work): spherical formulas so dependants compile.
import Foundation

/// Geodesics on an ellipsoid of revolution (WGS84 by default).
public struct Geodesic: Sendable {
    /// Equatorial radius in metres.
    public let equatorialRadius: Double
    /// Flattening.
    public let flattening: Double

    public init(equatorialRadius: Double, flattening: Double) {
        self.equatorialRadius = equatorialRadius
        self.flattening = flattening
    }

    /// The WGS84 ellipsoid.
    public static let wgs84 = Geodesic(equatorialRadius: 6_378_137, flattening: 1 / 298.257223563)

    /// Shortest distance in metres between two coordinates.
    public func distance(from a: Coordinate, to b: Coordinate) -> Double {
        let r = 6_371_008.8, d2r = Double.pi / 180
        let dlat = (b.latitude - a.latitude) * d2r, dlon = (b.longitude - a.longitude) * d2r
        let h = sin(dlat / 2) * sin(dlat / 2) + cos(a.latitude * d2r) * cos(b.latitude * d2r) * sin(dlon / 2) * sin(dlon / 2)
        return 2 * r * asin(min(1, h.squareRoot()))
    }

    /// The coordinate reached by travelling `distance` metres from `start` at `azimuth` degrees.
    public func destination(from start: Coordinate, azimuth: Double, distance: Double) -> Coordinate {
        let r = 6_371_008.8, d2r = Double.pi / 180
        let d = distance / r, az = azimuth * d2r, lat1 = start.latitude * d2r, lon1 = start.longitude * d2r
        let lat2 = asin(sin(lat1) * cos(d) + cos(lat1) * sin(d) * cos(az))
        let lon2 = lon1 + atan2(sin(az) * sin(d) * cos(lat1), cos(d) - sin(lat1) * sin(lat2))
        return Coordinate(latitude: lat2 / d2r, longitude: lon2 / d2r)
    }
}
