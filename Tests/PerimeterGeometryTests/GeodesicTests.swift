import Foundation
@testable import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// GeographicLib's test set (every row) plus hand-picked hard cases.
@Suite struct GeodesicTests {
    struct Row {
        var lat1, lon1, azi1, lat2, lon2, azi2, s12: Double
    }

    static func rows() throws -> [Row] {
        let data = try gunzip(Fixtures.url("conformance/geodesic/GeodTest-short-odd.dat.gz"))
        let text = String(decoding: data, as: UTF8.self)
        var rows: [Row] = []
        for (n, line) in text.split(separator: "\n").enumerated() {
            let f = line.split(separator: " ").compactMap { Double($0) }
            guard f.count == 10 else { throw TestInputError(description: "line \(n + 1): \(f.count) numeric columns") }
            rows.append(Row(lat1: f[0], lon1: f[1], azi1: f[2], lat2: f[3], lon2: f[4], azi2: f[5], s12: f[6]))
        }
        return rows
    }

    static func angleError(_ a: Double, _ b: Double) -> Double {
        Swift.abs(remainder(a - b, 360))
    }

    @Test(.enabled(if: Fixtures.available)) func inverseMatchesEveryRowWithin1mm() throws {
        let rows = try Self.rows()
        #expect(rows.count == 5000)
        let g = Geodesic.wgs84
        var worst = 0.0
        for (i, r) in rows.enumerated() {
            let inv = g.inverse(from: Coordinate(latitude: r.lat1, longitude: r.lon1),
                                to: Coordinate(latitude: r.lat2, longitude: r.lon2))
            let err = Swift.abs(inv.distance - r.s12)
            worst = Swift.max(worst, err)
            #expect(err <= 0.001, "row \(i + 1): s12 \(inv.distance) vs \(r.s12)")
            // Azimuths are ill-conditioned only for nearly antipodal points; check the others.
            if r.s12 < 19_000_000 {
                #expect(Self.angleError(inv.azimuth1, r.azi1) < 1e-7, "row \(i + 1): azi1 \(inv.azimuth1) vs \(r.azi1)")
                #expect(Self.angleError(inv.azimuth2, r.azi2) < 1e-7, "row \(i + 1): azi2 \(inv.azimuth2) vs \(r.azi2)")
            }
        }
        #expect(worst < 0.001)
    }

    @Test(.enabled(if: Fixtures.available)) func directMatchesEveryRow() throws {
        let rows = try Self.rows()
        let g = Geodesic.wgs84
        for (i, r) in rows.enumerated() {
            let start = Coordinate(latitude: r.lat1, longitude: r.lon1)
            let (end, azi2) = g.solveDirect(start, azimuth: r.azi1, distance: r.s12)
            let expected = Coordinate(latitude: r.lat2, longitude: r.lon2)
            #expect(Swift.abs(end.latitude - r.lat2) <= 1e-8, "row \(i + 1): lat2 \(end.latitude) vs \(r.lat2)")
            #expect(Self.angleError(end.longitude, r.lon2) * cos(r.lat2 * .pi / 180) <= 1e-8,
                    "row \(i + 1): lon2 \(end.longitude) vs \(r.lon2)")
            #expect(g.distance(from: end, to: expected) <= 0.001, "row \(i + 1): end point off")
            #expect(Self.angleError(azi2, r.azi2) < 1e-7, "row \(i + 1): azi2")
            #expect(end == g.destination(from: start, azimuth: r.azi1, distance: r.s12))
        }
    }

    /// Known values: a quarter meridian, half the equator, and the equatorial/meridional cases.
    @Test func knownDistances() {
        let g = Geodesic.wgs84
        let quarterMeridian = 10_001_965.729_311_2
        #expect(Swift.abs(g.distance(from: xy(0, 0), to: xy(0, 90)) - quarterMeridian) < 1e-3)
        #expect(Swift.abs(g.distance(from: xy(10, -90), to: xy(-50, 90)) - 2 * quarterMeridian) < 1e-3)
        #expect(Swift.abs(g.distance(from: xy(0, 0), to: xy(90, 0)) - 6_378_137 * Double.pi / 2) < 1e-6)
        #expect(g.distance(from: xy(12.5, 41.9), to: xy(12.5, 41.9)) == 0)
        // −180 and 180 are the same meridian.
        #expect(g.distance(from: xy(-180, 10), to: xy(180, 10)) < 1e-9)
    }

    /// Nearly antipodal points (the hard case for the inverse): converges, is symmetric, and the
    /// direct problem returns to the target.
    @Test(arguments: [
        (0.0, 0.0, 0.5, 179.5), (0.0, 0.0, 0.0, 179.9), (0.0, 0.0, 0.0, 180.0), (-30.0, 0.0, 30.0, 179.99),
        (-0.001, 0.0, 0.001, 179.9995), (45.0, 10.0, -45.0, -170.0), (1e-10, 0.0, -1e-10, 179.7),
    ])
    func nearlyAntipodal(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) {
        let g = Geodesic.wgs84
        let a = Coordinate(latitude: lat1, longitude: lon1), b = Coordinate(latitude: lat2, longitude: lon2)
        let forward = g.inverse(from: a, to: b), backward = g.inverse(from: b, to: a)
        #expect(forward.distance.isFinite && forward.distance > 19_900_000 && forward.distance < 20_010_000)
        #expect(Swift.abs(forward.distance - backward.distance) < 1e-6)
        let end = g.destination(from: a, azimuth: forward.azimuth1, distance: forward.distance)
        #expect(g.distance(from: end, to: b) < 1e-3, "\(end) vs \(b)")
    }

    /// Random pairs: the direct problem undoes the inverse one.
    @Test func randomRoundTrips() {
        var rng = SplitMix64(seed: 42)
        let g = Geodesic.wgs84
        for _ in 0..<2000 {
            let a = Coordinate(latitude: .random(in: -90...90, using: &rng), longitude: .random(in: -180...180, using: &rng))
            let b = Coordinate(latitude: .random(in: -90...90, using: &rng), longitude: .random(in: -180...180, using: &rng))
            let inv = g.inverse(from: a, to: b)
            let end = g.destination(from: a, azimuth: inv.azimuth1, distance: inv.distance)
            #expect(g.distance(from: end, to: b) < 1e-3, "\(a) → \(b)")
        }
    }
}
