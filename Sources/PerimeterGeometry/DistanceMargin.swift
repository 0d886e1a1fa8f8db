import Foundation

/// Conservative conversions of a distance in metres to degrees of latitude and longitude on WGS84,
/// used to reject far-away shapes cheaply and to expand bounding boxes.
///
/// Any path of length r changes latitude by at most r / (a(1 − e²)) radians, because the
/// meridional radius of curvature is at least a(1 − e²) (its equatorial value). While such a path
/// stays within |latitude| ≤ φ, it changes longitude by at most r / p(φ) radians, where
/// p(φ) = a·cos φ / √(1 − e² sin² φ) is the radius of the parallel at φ. Both bounds are then
/// widened by a relative 1e-9 to absorb rounding.
struct DistanceMargin {
    /// Metres per degree of latitude, at least (a(1 − e²)·π/180).
    static let minimumMetresPerDegreeLatitude: Double = {
        let g = Geodesic.wgs84
        return g.equatorialRadius * (1 - g.e2) * GeoMath.degree
    }()

    /// Most degrees of latitude a path of the given length can span.
    static func latitudeDegrees(metres r: Double) -> Double {
        r / minimumMetresPerDegreeLatitude * (1 + 1e-9)
    }

    /// Most degrees of longitude a path of length r can span while |latitude| ≤ `maxAbsLatitude`;
    /// `nil` when unbounded (the band reaches a pole or the span would reach 180°).
    static func longitudeDegrees(metres r: Double, maxAbsLatitude: Double) -> Double? {
        guard maxAbsLatitude < 90 else { return nil }
        let (s, c) = GeoMath.sincosd(maxAbsLatitude)
        let e2 = Geodesic.wgs84.e2
        let parallel = Geodesic.wgs84.equatorialRadius * c / (1 - e2 * s * s).squareRoot()
        guard parallel > 0 else { return nil }
        let d = r / (parallel * GeoMath.degree) * (1 + 1e-9)
        return d < 180 ? d : nil
    }

    /// Degrees of latitude within reach.
    let latitudeDegrees: Double
    /// Degrees of longitude within reach, `.infinity` when unbounded.
    let longitudeDegrees: Double

    /// The reach of `metres` around a point at latitude `latitude`.
    init(metres: Double, around latitude: Double) {
        latitudeDegrees = DistanceMargin.latitudeDegrees(metres: metres)
        longitudeDegrees = DistanceMargin.longitudeDegrees(
            metres: metres, maxAbsLatitude: Swift.abs(latitude) + latitudeDegrees) ?? .infinity
    }

    /// Whether some point of the box (longitudes taken literally, the point's modulo 360) may lie
    /// within reach of `c`. `false` is certain; `true` means "maybe".
    func mayReach(_ c: Coordinate, minLongitude: Double, maxLongitude: Double,
                  minLatitude: Double, maxLatitude: Double) -> Bool {
        guard c.latitude >= minLatitude - latitudeDegrees, c.latitude <= maxLatitude + latitudeDegrees
        else { return false }
        guard longitudeDegrees < .infinity else { return true }
        let mid = (minLongitude + maxLongitude) / 2
        var x = c.longitude
        x += 360 * ((mid - x) / 360).rounded()
        return Swift.max(minLongitude - x, x - maxLongitude) <= longitudeDegrees
    }

    /// Whether some point of the segment a–b's box may lie within reach of `c`.
    func mayReach(_ c: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Bool {
        mayReach(c, minLongitude: Swift.min(a.longitude, b.longitude), maxLongitude: Swift.max(a.longitude, b.longitude),
                 minLatitude: Swift.min(a.latitude, b.latitude), maxLatitude: Swift.max(a.latitude, b.latitude))
    }
}
