import Foundation
import PerimeterGeometry
import Testing
import PerimeterTestSupport

/// Polygon membership: even-odd, boundary inside, antimeridian, and random polygons vs an
/// independent oracle (exact integer boundary test + winding-angle parity).
@Suite struct PolygonTests {
    /// On the boundary: integer cross product zero and within the edge's box.
    static func onBoundary(_ p: (Int, Int), _ rings: [[(Int, Int)]]) -> Bool {
        for r in rings {
            for i in 0..<r.count {
                let a = r[i], b = r[(i + 1) % r.count]
                let cross = (b.0 - a.0) * (p.1 - a.1) - (b.1 - a.1) * (p.0 - a.0)
                if cross == 0, p.0 >= min(a.0, b.0), p.0 <= max(a.0, b.0), p.1 >= min(a.1, b.1), p.1 <= max(a.1, b.1) {
                    return true
                }
            }
        }
        return false
    }

    /// Even-odd by the parity of the total winding number, summed from turning angles.
    static func windingParityInside(_ p: (Double, Double), _ rings: [[(Int, Int)]]) -> Bool {
        var total = 0
        for r in rings {
            var angle = 0.0
            for i in 0..<r.count {
                let a = r[i], b = r[(i + 1) % r.count]
                let ax = Double(a.0) - p.0, ay = Double(a.1) - p.1, bx = Double(b.0) - p.0, by = Double(b.1) - p.1
                angle += atan2(ax * by - ay * bx, ax * bx + ay * by)
            }
            total += Int((angle / (2 * .pi)).rounded())
        }
        return total % 2 != 0
    }

    static func polygon(_ rings: [[(Int, Int)]], scale: Double, offset: (Double, Double)) -> Polygon {
        Polygon(rings: rings.map { r in
            var c = r.map { xy(Double($0.0) * scale + offset.0, Double($0.1) * scale + offset.1) }
            c.append(c[0])
            return c
        })
    }

    /// Random (often self-intersecting) rings on a small grid, queried at every grid point and
    /// half-grid point: many land exactly on edges and vertices.
    @Test(arguments: [(1.0, 0.0, 0.0), (0x1p-12, 2.25, 48.75), (0x1p-8, -179.0, -33.5)])
    func randomGridPolygonsMatchOracle(_ scale: Double, _ ox: Double, _ oy: Double) {
        var rng = SplitMix64(seed: 2024)
        var boundaryHits = 0, insideHits = 0
        for _ in 0..<60 {
            let ringCount = Int.random(in: 1...3, using: &rng)
            let rings: [[(Int, Int)]] = (0..<ringCount).map { _ in
                (0..<Int.random(in: 3...8, using: &rng)).map { _ in (Int.random(in: 0...12, using: &rng), Int.random(in: 0...12, using: &rng)) }
            }
            let poly = Self.polygon(rings, scale: scale, offset: (ox, oy))
            for gx in -2...28 {
                for gy in -2...28 {
                    let q = (Double(gx) / 2, Double(gy) / 2)
                    let point = xy(q.0 * scale + ox, q.1 * scale + oy)
                    let expected: Bool
                    if gx % 2 == 0 && gy % 2 == 0 && Self.onBoundary((gx / 2, gy / 2), rings.map { $0.map { ($0.0, $0.1) } }) {
                        expected = true
                    } else if Self.onBoundary((gx, gy), rings.map { $0.map { ($0.0 * 2, $0.1 * 2) } }) {
                        expected = true // half-grid point on an edge
                    } else {
                        expected = Self.windingParityInside(q, rings)
                    }
                    if expected { insideHits += 1 }
                    #expect(poly.contains(point) == expected, "rings \(rings) point \(q)")
                }
            }
            for r in rings { for v in r { if Self.onBoundary(v, rings) { boundaryHits += 1 } } }
        }
        #expect(boundaryHits > 0 && insideHits > 0)
    }

    @Test func holesAreOutsideAndTheirBoundaryInside() {
        let p = Polygon(rings: [ring([(0, 0), (10, 0), (10, 10), (0, 10)]), ring([(3, 3), (7, 3), (7, 7), (3, 7)])])
        #expect(p.contains(xy(1, 1)))
        #expect(!p.contains(xy(5, 5)))
        #expect(p.contains(xy(3, 5)))   // hole edge
        #expect(p.contains(xy(7, 7)))   // hole vertex
        #expect(p.contains(xy(10, 5)))  // outer edge
        #expect(!p.contains(xy(10.0.nextUp, 5)))
        #expect(!p.contains(xy(11, 5)))
    }

    @Test func selfIntersectingFollowsEvenOdd() {
        // A bow tie and a ring overlapping itself twice (pentagram: centre has winding 2 → outside).
        let star = Polygon(rings: [ring([(0, 0), (4, 10), (8, 0), (-2, 6), (10, 6)])])
        #expect(!star.contains(xy(4, 4.5)))
        #expect(star.contains(xy(4, 8)))
        let bowtie = Polygon(rings: [ring([(0, 0), (10, 10), (10, 0), (0, 10)])])
        #expect(bowtie.contains(xy(1, 5)))
        #expect(bowtie.contains(xy(5, 5)))  // the crossing point lies on both edges
        #expect(!bowtie.contains(xy(5, 8)))
    }

    @Test func antimeridianSameMeridian() {
        // Split polygons touching ±180 (as in Natural Earth's Fiji/Russia).
        let east = Polygon(rings: [ring([(170, -20), (180, -20), (180, -10), (170, -10)])])
        let west = Polygon(rings: [ring([(-180, -20), (-170, -20), (-170, -10), (-180, -10)])])
        for p in [east, west] {
            #expect(p.contains(xy(180, -15)))
            #expect(p.contains(xy(-180, -15)))
        }
        #expect(!east.contains(xy(-179, -15)))
        #expect(!west.contains(xy(179, -15)))
    }

    @Test(arguments: [175.0, -175.0, 179.999, -180.0, 180.0, 185.0])
    func polygonBeyond180(_ lon: Double) {
        // Written with 170…190: holds −175 (≡ 185) and 175, but not −165 (≡ 195).
        let p = Polygon(rings: [ring([(170, 0), (190, 0), (190, 10), (170, 10)])])
        #expect(p.contains(xy(lon, 5)))
        #expect(p.contains(xy(lon + 360, 5)) || lon + 360 > 190 + 360)
        let shifted = lon > 0 ? lon - 360 : lon + 360
        #expect(p.contains(xy(shifted, 5)))
        #expect(!p.contains(xy(-165, 5)))
        #expect(!p.contains(xy(165, 5)))
        // The same polygon written with −190…−170.
        let q = Polygon(rings: [ring([(-190, 0), (-170, 0), (-170, 10), (-190, 10)])])
        #expect(q.contains(xy(lon, 5)))
        #expect(q.contains(xy(shifted, 5)))
    }

    @Test func mutatingRingsKeepsTheBoxInStep() {
        var p = Polygon(rings: [ring([(0, 0), (1, 0), (1, 1)])])
        #expect(!p.contains(xy(5, 0.5)))
        p.rings = [ring([(0, 0), (10, 0), (10, 1)])]
        #expect(p.contains(xy(5, 0.4)))
        #expect(p.boundingBox == BoundingBox(minLongitude: 0, minLatitude: 0, maxLongitude: 10, maxLatitude: 1))
        #expect(!Polygon(rings: []).contains(xy(0, 0)))
        #expect(!Polygon(rings: [[]]).contains(xy(0, 0)))
    }
}
