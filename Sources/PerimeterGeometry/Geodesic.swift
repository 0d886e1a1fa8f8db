import Foundation

/// Geodesics on an ellipsoid of revolution (WGS84 by default), after Karney (2013), "Algorithms for
/// geodesics", J. Geodesy 87:43–55, with series to order 6 in the third flattening.
///
/// Accurate to a few nanometres for the Earth's flattening (well inside 1 mm); the inverse problem
/// converges for every pair of points, near-antipodal ones included. See docs/geometry.md.
public struct Geodesic: Sendable {
    /// Equatorial radius in metres.
    public let equatorialRadius: Double
    /// Flattening.
    public let flattening: Double

    /// 1 − f.
    let f1: Double
    /// First eccentricity squared.
    let e2: Double
    /// Second eccentricity squared.
    let ep2: Double
    /// Third flattening n = f / (2 − f).
    let n: Double
    /// Polar semi-axis in metres.
    let b: Double
    /// Coefficients of ε¹…ε⁵ in A₃(ε) (depend on n only).
    let a3: (Double, Double, Double, Double, Double)
    /// Coefficients of the C₃ₗ(ε) polynomials (depend on n only), indexed [l][power].
    let c3: C3Table
    /// Tolerance below which a short line is solved directly on the auxiliary sphere.
    let etol2: Double

    /// Creates the geodesic calculator for an ellipsoid.
    /// - Parameters:
    ///   - equatorialRadius: semi-major axis in metres (positive).
    ///   - flattening: (a − b)/a; small values of either sign are supported.
    public init(equatorialRadius: Double, flattening: Double) {
        self.equatorialRadius = equatorialRadius
        self.flattening = flattening
        let f = flattening
        f1 = 1 - f
        e2 = f * (2 - f)
        ep2 = e2 / (f1 * f1)
        let n = f / (2 - f)
        self.n = n
        b = equatorialRadius * f1
        a3 = (-(0.5 - 0.5 * n),
              -(0.25 + n * (0.125 - 0.375 * n)),
              -(1.0 / 16 + n * (3.0 / 16 + n / 16)),
              -(3.0 / 64 + n / 32),
              -3.0 / 128)
        c3 = C3Table(n: n)
        let tol2 = Double.ulpOfOne.squareRoot()
        etol2 = 0.1 * tol2 / (Swift.max(0.001, Swift.abs(f)) * Swift.min(1, 1 - f / 2) / 2).squareRoot()
    }

    /// The WGS84 ellipsoid.
    public static let wgs84 = Geodesic(equatorialRadius: 6_378_137, flattening: 1 / 298.257223563)

    /// Shortest (geodesic) distance in metres between two coordinates.
    /// - Complexity: O(1); a few Newton steps at most, allocation-free.
    public func distance(from a: Coordinate, to b: Coordinate) -> Double {
        solveInverse(a, b).distance
    }

    /// The shortest geodesic between two points: its length and the azimuths at both ends.
    /// - Complexity: O(1); allocation-free.
    public func inverse(from a: Coordinate, to b: Coordinate) -> GeodesicInverse {
        let r = solveInverse(a, b)
        return GeodesicInverse(distance: r.distance,
                               azimuth1: GeoMath.atan2d(r.salp1, r.calp1),
                               azimuth2: GeoMath.atan2d(r.salp2, r.calp2))
    }
}

/// The solution of the inverse geodesic problem between two points.
public struct GeodesicInverse: Hashable, Sendable {
    /// Length of the geodesic in metres.
    public var distance: Double
    /// Azimuth at the first point, degrees clockwise from north, −180…180.
    public var azimuth1: Double
    /// Azimuth (forward direction) at the second point, degrees clockwise from north, −180…180.
    public var azimuth2: Double

    /// Creates a solution from its parts.
    public init(distance: Double, azimuth1: Double, azimuth2: Double) {
        self.distance = distance
        self.azimuth1 = azimuth1
        self.azimuth2 = azimuth2
    }
}
