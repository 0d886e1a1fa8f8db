import Foundation
import PerimeterGeometry

/// Conservative conversions between metres on the WGS84 ellipsoid and degrees, used to decide
/// which cells a distance-based region (circle, corridor, buffer) can reach, and which it surely
/// covers.
///
/// The metric is ds² = M²dφ² + N²cos²φ dλ² with M ∈ [110 574, 111 694] m/° and N·π/180 ≥ 111 319 m/°,
/// so a path of length s moves at most s/110 574 degrees of latitude and s/(111 319·cos φ) of
/// longitude. The constants below round those outwards, and every threshold is padded by
/// ``relativeSlack`` and ``absoluteSlack`` so that the exact tests (accurate to far better) agree.
enum GeodesicBounds {
    /// Fewer metres than any degree of latitude.
    static let minMetresPerDegreeLatitude = 110_500.0
    /// More metres than any degree of latitude.
    static let maxMetresPerDegreeLatitude = 111_700.0
    /// Fewer metres than a degree of longitude at the equator (scaled by cos φ elsewhere).
    static let minMetresPerDegreeLongitude = 111_300.0
    /// More metres than a degree of longitude at the equator (scaled by cos φ elsewhere).
    static let maxMetresPerDegreeLongitude = 111_330.0
    /// Relative safety margin on distances.
    static let relativeSlack = 0.02
    /// Absolute safety margin on distances, metres.
    static let absoluteSlack = 1.0
    /// Longest segment for which a corridor cell may be declared fully inside (the exact segment
    /// distance is documented to 0.1 % only up to this length), metres.
    static let maxCertifiedSegmentMetres = 50_000.0

    /// How far, in degrees, points within `metres` of something spanning latitudes `latLo…latHi`
    /// can lie: the latitude reach, and the longitude reach (`nil` when a pole is within reach, or
    /// the reach exceeds 180°, so every longitude is possible).
    static func reach(metres: Double, latLo: Double, latHi: Double) -> (latitude: Double, longitude: Double?) {
        let padded = metres * (1 + relativeSlack) + absoluteSlack
        let dLat = padded / minMetresPerDegreeLatitude
        let lo = latLo - dLat, hi = latHi + dLat
        guard lo > -90, hi < 90 else { return (dLat, nil) }
        let worst = Swift.max(Swift.abs(lo), Swift.abs(hi))
        let cosine = cos(worst * .pi / 180)
        let dLon = padded / (minMetresPerDegreeLongitude * cosine)
        guard dLon.isFinite, dLon < 180 else { return (dLat, nil) }
        return (dLat, dLon)
    }

    /// An upper bound on the geodesic distance from the centre of a cell to any point of it
    /// (meridian to the point's latitude, then along its parallel), or `nil` if the cell reaches
    /// past a pole.
    static func cellRadius(minY: Double, maxY: Double, side: Double) -> Double? {
        guard minY >= -90, maxY <= 90 else { return nil }
        let nearestEquator = (minY <= 0 && maxY >= 0) ? 0 : Swift.min(Swift.abs(minY), Swift.abs(maxY))
        let cosine = cos(nearestEquator * .pi / 180)
        return side / 2 * maxMetresPerDegreeLatitude + side / 2 * maxMetresPerDegreeLongitude * cosine
    }

    /// Whether every point within `radius` of a point at distance `distance` from the shape is
    /// certainly within `limit` of it.
    static func certainlyWithin(distance: Double, radius: Double, limit: Double) -> Bool {
        ((distance * (1 + relativeSlack) + radius) * (1 + relativeSlack) + absoluteSlack) <= limit
    }

    /// Whether every point within `radius` of a point at true distance `distance` from a point is
    /// certainly farther than `limit` from it.
    static func certainlyBeyond(distance: Double, radius: Double, limit: Double) -> Bool {
        ((distance / (1 + relativeSlack) - radius) / (1 + relativeSlack) - absoluteSlack) > limit
    }
}
