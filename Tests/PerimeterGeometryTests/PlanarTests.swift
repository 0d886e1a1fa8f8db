import PerimeterGeometry
import Testing
import PerimeterTestSupport

/// Exactness of the planar predicates against Int128 arithmetic.
@Suite struct PlanarTests {
    /// The exact orientation for doubles that are multiples of 2⁻⁵² below 2¹⁰ in magnitude.
    static func oracle(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate) -> Int {
        func i(_ x: Double) -> Int128 {
            let scaled = x * 0x1p52
            precondition(scaled.rounded() == scaled && Swift.abs(scaled) < 0x1p63, "test value not on the grid")
            return Int128(Int64(scaled))
        }
        let d = (i(b.longitude) - i(a.longitude)) * (i(c.latitude) - i(a.latitude))
            - (i(b.latitude) - i(a.latitude)) * (i(c.longitude) - i(a.longitude))
        return d > 0 ? 1 : (d < 0 ? -1 : 0)
    }

    @Test func classicNearlyCollinearGrid() {
        // Kettner et al.'s example: naive floating point gets many of these wrong.
        let b = xy(12, 12), c = xy(24, 24)
        var disagreements = 0
        for i in 0..<64 {
            for j in 0..<64 {
                let a = xy(0.5 + Double(i) * 0x1p-52, 0.5 + Double(j) * 0x1p-52)
                let exact = Self.oracle(a, b, c)
                #expect(Planar.orientation(a, b, c) == exact, "a = \(a)")
                let naive = (b.longitude - a.longitude) * (c.latitude - a.latitude) - (b.latitude - a.latitude) * (c.longitude - a.longitude)
                if (naive > 0 ? 1 : naive < 0 ? -1 : 0) != exact { disagreements += 1 }
            }
        }
        #expect(disagreements > 0, "the grid no longer exercises the exact path")
    }

    @Test func randomNearlyCollinearTriples() {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            func r() -> Double { Double(Int64.random(in: -(1 << 40)...(1 << 40), using: &rng)) * 0x1p-32 }
            let a = xy(r(), r()), b = xy(r(), r())
            // c on the line through a and b (rounded), nudged by a few ulps.
            let t = Double(Int.random(in: -4...4, using: &rng)) / 2
            var cx = a.longitude + t * (b.longitude - a.longitude)
            var cy = a.latitude + t * (b.latitude - a.latitude)
            for _ in 0..<Int.random(in: 0...2, using: &rng) { cx = Bool.random(using: &rng) ? cx.nextUp : cx.nextDown }
            for _ in 0..<Int.random(in: 0...2, using: &rng) { cy = Bool.random(using: &rng) ? cy.nextUp : cy.nextDown }
            let c = xy(cx, cy)
            guard Swift.abs(cx) < 1024, Swift.abs(cy) < 1024, (cx * 0x1p52).rounded() == cx * 0x1p52,
                  (cy * 0x1p52).rounded() == cy * 0x1p52 else { continue }
            let exact = Self.oracle(a, b, c)
            #expect(Planar.orientation(a, b, c) == exact)
            #expect(Planar.orientation(b, c, a) == exact)
            #expect(Planar.orientation(b, a, c) == -exact)
        }
    }

    /// Scaling every coordinate by the same power of two keeps the sign: this drives the
    /// arbitrary-precision path (huge and tiny magnitudes).
    @Test(arguments: [0x1p600, 0x1p-700, 0x1p1000, 0x1p-1000])
    func extremeMagnitudes(_ scale: Double) {
        var rng = SplitMix64(seed: 11)
        for _ in 0..<500 {
            func r() -> Double { Double(Int.random(in: -50...50, using: &rng)) }
            let a = xy(r(), r()), b = xy(r(), r())
            let t = Double(Int.random(in: -3...3, using: &rng))
            let c = xy(a.longitude + t * (b.longitude - a.longitude) + Double(Int.random(in: -1...1, using: &rng)),
                       a.latitude + t * (b.latitude - a.latitude))
            let exact = Self.oracle(a, b, c)
            func s(_ p: Coordinate) -> Coordinate { xy(p.longitude * scale, p.latitude * scale) }
            #expect(Planar.orientation(s(a), s(b), s(c)) == exact, "scale \(scale)")
        }
        // Mixed magnitudes: a tiny offset from a huge collinear configuration.
        #expect(Planar.orientation(xy(0, 0), xy(1e300, 1e300), xy(1e-300, 1e-300)) == 0)
        #expect(Planar.orientation(xy(0, 0), xy(1e300, 1e300), xy(1e-300, 1e-300.nextUp)) == 1)
        #expect(Planar.orientation(xy(0, 0), xy(1e300, 1e300), xy(1e-300.nextUp, 1e-300)) == -1)
    }

    @Test func onSegmentIsExactAndClosed() {
        let a = xy(0.1, 0.2), b = xy(0.7, 1.4)
        #expect(Planar.isOnSegment(a, a, b))
        #expect(Planar.isOnSegment(b, a, b))
        #expect(!Planar.isOnSegment(xy(1.3, 2.6), a, b)) // on the line, beyond b
        #expect(Planar.isOnSegment(xy(2, 3), xy(0, 0), xy(4, 6)))
        #expect(!Planar.isOnSegment(xy(2, 3.0.nextUp), xy(0, 0), xy(4, 6)))
        #expect(Planar.isOnSegment(xy(5, 5), xy(5, 5), xy(5, 5)))
        #expect(!Planar.isOnSegment(xy(5, 5.0.nextUp), xy(5, 5), xy(5, 5)))
        // Horizontal and vertical edges.
        #expect(Planar.isOnSegment(xy(3, 1), xy(0, 1), xy(10, 1)))
        #expect(!Planar.isOnSegment(xy(11, 1), xy(0, 1), xy(10, 1)))
        #expect(Planar.isOnSegment(xy(1, -3), xy(1, -5), xy(1, 0)))
    }
}
