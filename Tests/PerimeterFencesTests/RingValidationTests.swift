import Foundation
@testable import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// `RingValidation.firstSelfIntersection` — the pair sweep over edges sorted by longitude, the line
/// sweep (Shamos–Hoey) that proves rings simple, each forced, and the automatic choice — against a brute
/// force over all edge pairs in exact integer arithmetic, on random rings whose integer coordinates make
/// touching, collinear and repeated vertices common (a line sweep that called such a ring simple would
/// return `nil` where the brute force finds a pair).
@Suite("Ring self-intersection sweep")
struct RingValidationTests {
    private static func orientation(_ p: (Int, Int), _ q: (Int, Int), _ r: (Int, Int)) -> Int {
        let d = (q.0 - p.0) * (r.1 - p.1) - (q.1 - p.1) * (r.0 - p.0)
        return d > 0 ? 1 : d < 0 ? -1 : 0
    }

    private static func onSegment(_ p: (Int, Int), _ a: (Int, Int), _ b: (Int, Int)) -> Bool {
        orientation(a, b, p) == 0 && p.0 >= min(a.0, b.0) && p.0 <= max(a.0, b.0)
            && p.1 >= min(a.1, b.1) && p.1 <= max(a.1, b.1)
    }

    private static func touch(_ p1: (Int, Int), _ p2: (Int, Int), _ q1: (Int, Int), _ q2: (Int, Int)) -> Bool {
        let o1 = orientation(p1, p2, q1), o2 = orientation(p1, p2, q2)
        let o3 = orientation(q1, q2, p1), o4 = orientation(q1, q2, p2)
        if o1 * o2 < 0 && o3 * o4 < 0 { return true }
        return onSegment(q1, p1, p2) || onSegment(q2, p1, p2) || onSegment(p1, q1, q2) || onSegment(p2, q1, q2)
    }

    /// The first (lexicographically smallest) pair of edges that are wrong, by brute force.
    private static func bruteForce(_ points: [(Int, Int)]) -> (Int, Int)? {
        var ring: [(Int, Int)] = []
        for p in points where ring.last.map({ $0 != p }) ?? true { ring.append(p) }
        let n = ring.count - 1
        guard n >= 3 else { return nil }
        for a in 0..<n {
            for b in (a + 1)..<n {
                let (p1, p2, q1, q2) = (ring[a], ring[a + 1], ring[b], ring[b + 1])
                if b == a + 1 || (a == 0 && b == n - 1) {
                    // Adjacent: wrong when collinear and folding back over the shared vertex.
                    let (shared, farP, farQ) = b == a + 1 ? (p2, p1, q2) : (p1, p2, q1)
                    if orientation(shared, farP, farQ) == 0,
                       (farP.0 - shared.0) * (farQ.0 - shared.0) + (farP.1 - shared.1) * (farQ.1 - shared.1) > 0 {
                        return (a, b)
                    }
                } else if touch(p1, p2, q1, q2) {
                    return (a, b)
                }
            }
        }
        return nil
    }

    static let methods: [RingValidation.Method] = [.pairs, .sweepLine, .star, .automatic]

    @Test(arguments: methods, [1, 2, 3, 4, 5] as [UInt64])
    func sweepMatchesBruteForce(method: RingValidation.Method, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            let count = Int.random(in: 3...9, using: &random)
            var points = (0..<count).map { _ in (Int.random(in: 0...4, using: &random), Int.random(in: 0...4, using: &random)) }
            points.append(points[0])
            let coordinates = points.map { Coordinate(latitude: Double($0.1), longitude: Double($0.0)) }
            let sweep = RingValidation.firstSelfIntersection(coordinates, method: method)
            let expected = Self.bruteForce(points)
            #expect(sweep?.0 == expected?.0 && sweep?.1 == expected?.1, "ring \(points)")
        }
    }

    @Test("long rings (lattice walks, dented circles, stars) find the brute-force pair",
          arguments: methods, [11, 12, 13] as [UInt64])
    func longRingsMatchBruteForce(method: RingValidation.Method, seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for round in 0..<60 {
            let count = Int.random(in: 64...260, using: &random)
            var points: [(Int, Int)]
            switch round % 3 {
            case 0:  // a lattice walk of short steps: many touching edges
                var p = (0, 0)
                points = (0..<count).map { _ in
                    p = (p.0 + Int.random(in: -2...2, using: &random), p.1 + Int.random(in: -2...2, using: &random))
                    return p
                }
            case 1:  // a convex-ish ring of many short edges, sometimes dented across itself
                points = (0..<count).map { k in
                    let angle = Double(k) / Double(count) * 2 * Double.pi
                    return (Int((cos(angle) * 4000).rounded()), Int((sin(angle) * 4000).rounded()))
                }
                if Bool.random(using: &random) { points[count / 2] = (Int.random(in: -4500...4500, using: &random), 0) }
            default:  // a star: every edge long, longitude ranges overlapping widely
                points = (0..<count).map { k in
                    let angle = Double(k) / Double(count) * 2 * Double.pi, radius = k % 2 == 0 ? 4000.0 : 10.0
                    return (Int((cos(angle) * radius).rounded()), Int((sin(angle) * radius).rounded()))
                }
                if Bool.random(using: &random) { points.swapAt(3, count - 5) }
            }
            points.append(points[0])
            let coordinates = points.map { Coordinate(latitude: Double($0.1), longitude: Double($0.0)) }
            let found = RingValidation.firstSelfIntersection(coordinates, method: method)
            let expected = Self.bruteForce(points)
            #expect(found?.0 == expected?.0 && found?.1 == expected?.1, "round \(round): \(String(describing: found)) vs \(String(describing: expected))")
        }
    }

    @Test("a simple ring of 20,000 vertices is simple", arguments: methods)
    func bigSimpleRing(method: RingValidation.Method) {
        let count = 20_000
        var ring = (0..<count).map { k -> Coordinate in
            let angle = Double(k) / Double(count) * 2 * Double.pi
            let radius = 0.1 + 0.01 * sin(angle * 37)
            return Coordinate(latitude: 45 + radius * sin(angle), longitude: 7 + radius * cos(angle))
        }
        ring.append(ring[0])
        #expect(RingValidation.firstSelfIntersection(ring, method: method) == nil)
        ring[10_000] = Coordinate(latitude: 45, longitude: 7.5)  // a spike across the ring
        #expect(RingValidation.firstSelfIntersection(ring, method: method) != nil)
    }

    /// Rough rings like gen_workload.py's large fences (radius noise of many harmonics), scaled onto an
    /// integer lattice so that the brute force is exact: vertices often repeat, edges touch and run along
    /// each other, and some rings are simple. Long enough for the automatic choice to take the line sweep.
    @Test("rough lattice rings of 150–600 vertices: both sweeps find the brute-force pair",
          arguments: [21, 22, 23, 24] as [UInt64])
    func roughRingsMatchBruteForce(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for round in 0..<12 {
            let count = Int.random(in: 150...600, using: &random)
            let harmonics = (1...12).map { k in (Double.random(in: -1...1, using: &random) / Double(k), Double.random(in: 0...6.28, using: &random)) }
            let roughness = round % 2 == 0 ? 0.05 : 0.6  // smooth (usually simple) or rough (usually not)
            let scale = Double([40, 400, 4000][round % 3])  // coarse lattices make touching and collinear common
            var points: [(Int, Int)] = (0..<count).map { k in
                let angle = (Double(k) + Double.random(in: 0..<0.8, using: &random)) / Double(count) * 2 * Double.pi
                var radius = 1.0
                for (j, (amplitude, phase)) in harmonics.enumerated() { radius += roughness * amplitude * sin(Double(j + 1) * angle + phase) }
                radius = max(radius, 0.2)
                return (Int((cos(angle) * radius * scale).rounded()), Int((sin(angle) * radius * scale).rounded()))
            }
            points.append(points[0])
            let coordinates = points.map { Coordinate(latitude: Double($0.1), longitude: Double($0.0)) }
            let expected = Self.bruteForce(points)
            for method in Self.methods {
                let found = RingValidation.firstSelfIntersection(coordinates, method: method)
                #expect(found?.0 == expected?.0 && found?.1 == expected?.1,
                        "\(method), round \(round): \(String(describing: found)) vs \(String(describing: expected))")
            }
        }
    }

    /// Hand-made degenerate rings: a vertex touching a far edge, collinear edges overlapping, a ring
    /// passing twice through one vertex, a zero-width ring folding back on itself, a long thin simple
    /// ring, vertical edges, and long diagonals across a staircase of short edges.
    @Test("touching, collinear and degenerate rings", arguments: methods)
    func degenerateRings(method: RingValidation.Method) {
        let rings: [[(Int, Int)]] = [
            [(0, 0), (10, 0), (10, 10), (5, 0), (0, 10), (0, 0)],         // vertex on a far edge
            [(0, 0), (10, 0), (10, 5), (4, 0), (4, -5), (0, -5), (0, 0)],  // edge along another edge
            [(0, 0), (5, 5), (10, 0), (10, 10), (5, 5), (0, 10), (0, 0)],  // figure eight through one vertex
            [(0, 0), (10, 0), (0, 0)],                                      // folds back on itself
            [(0, 0), (10, 0), (5, 0), (0, 0)],                              // collinear, folding
            [(0, 0), (1000, 1), (1000, 2), (0, 3), (0, 0)],                 // thin and simple
            [(0, 0), (1000, 1000), (1001, 1000), (1, 0), (1000, 999), (0, 0)],  // two long diagonals crossing
            [(0, 0), (2, 0), (2, 1), (1, 1), (1, 3), (2, 3), (2, 4), (0, 4), (0, 0)],  // simple, vertical edges on one line
            [(0, 0), (2, 0), (2, 2), (1, 2), (1, 1), (1, 3), (0, 3), (0, 0)],  // a vertical edge folding back
            [(0, 0), (4, 0), (4, 4), (2, 4), (2, 0), (0, 4), (0, 0)],  // a vertex on a far edge
        ]
        // A staircase of 200 unit steps (vertical and horizontal edges, vertices on one line) closed by long
        // diagonals that touch it.
        var staircase: [(Int, Int)] = [(0, 0)]
        for k in 0..<100 { staircase += [(k + 1, k), (k + 1, k + 1)] }
        for k in 1...3 { staircase += [(0, k), (100, 100 - k)] }
        staircase.append((0, 0))
        for points in rings + [staircase] {
            let coordinates = points.map { Coordinate(latitude: Double($0.1), longitude: Double($0.0)) }
            let found = RingValidation.firstSelfIntersection(coordinates, method: method)
            let expected = Self.bruteForce(points)
            #expect(found?.0 == expected?.0 && found?.1 == expected?.1, "\(points): \(String(describing: found)) vs \(String(describing: expected))")
        }
        #expect(Self.bruteForce([(0, 0), (10, 0), (10, 10), (5, 0), (0, 10), (0, 0)]) != nil)
        #expect(Self.bruteForce([(0, 0), (1000, 1), (1000, 2), (0, 3), (0, 0)]) == nil)
    }

    /// The line sweep is what makes validation fast, so it must prove simple rings simple rather than
    /// hand them to the pair sweep: star-shaped rings with rough radii (gen_workload.py's shape, simple by
    /// construction), with and without the jitter that makes their edges' boxes overlap by the hundred.
    @Test("the line sweep proves rough star-shaped rings simple")
    func lineSweepProvesStarsSimple() {
        var random = SplitMix64(seed: 31)
        for round in 0..<20 {
            let count = Int.random(in: 64...5_000, using: &random)
            let jitter = round % 2 == 0 ? 0.0 : 0.05
            var angles = (0..<count).map { k in (Double(k) + Double.random(in: 0..<0.8, using: &random)) / Double(count) * 2 * Double.pi }
            angles.sort()
            var ring = angles.map { angle -> Coordinate in
                let radius = 0.1 * (1 + 0.3 * sin(3 * angle) + Double.random(in: -jitter...jitter, using: &random))
                return Coordinate(latitude: 46 + radius * sin(angle), longitude: 7 + radius * cos(angle))
            }
            ring.append(ring[0])
            let n = ring.count - 1
            #expect(ring.withUnsafeBufferPointer { RingValidation.isSimpleBySweepLine($0, edges: n) }, "round \(round), \(count) vertices")
            #expect(RingValidation.firstSelfIntersection(ring, method: .pairs) == nil)
        }
    }

    /// Rings like gen_workload.py's (`star_ring`): strictly increasing angles with jitter, a radius of
    /// many harmonics with a 1/f spectrum plus per-vertex noise, in degrees at a city's latitude.
    private static func roughStar(count: Int, roughness: Double, harmonics: Int, radius: Double,
                                  _ random: inout SplitMix64) -> [Coordinate] {
        let offset = Double.random(in: 0..<(2 * Double.pi), using: &random)
        let waves = (1...harmonics).map { k in
            (Double.random(in: -1...1, using: &random) / Double(k), Double.random(in: 0..<(2 * Double.pi), using: &random))
        }
        let norm = max(1e-9, waves.map { $0.0 * $0.0 }.reduce(0, +).squareRoot())
        var ring = (0..<count).map { k -> Coordinate in
            let angle = (Double(k) + Double.random(in: 0..<0.8, using: &random)) / Double(count) * 2 * Double.pi + offset
            var r = 1.0
            for (j, (amplitude, phase)) in waves.enumerated() { r += roughness * amplitude / norm * sin(Double(j + 1) * angle + phase) }
            r += roughness * 0.15 * Double.random(in: -1...1, using: &random)
            r = max(r, 0.25) * radius
            return Coordinate(latitude: 48.1 + r * sin(angle), longitude: 11.5 + r * cos(angle) / cos(48.1 * Double.pi / 180))
        }
        ring.append(ring[0])
        return ring
    }

    /// The star proof is what makes validation linear, so it must prove star-shaped rings simple: smooth
    /// ones from the mean of their vertices, rough ones of up to 20,000 vertices (gen_workload.py's large
    /// fences, whose kernel is a few ten-thousandths of their width) from the kernel point, clockwise ones
    /// (holes) too. Every answer is also the pair sweep's.
    @Test("the star proof proves rough star-shaped rings simple, either way round")
    func starProofProvesStarsSimple() {
        var random = SplitMix64(seed: 41)
        for round in 0..<24 {
            let large = round % 3 == 0
            let count = large ? Int.random(in: 1_000...20_000, using: &random) : Int.random(in: 8...200, using: &random)
            var ring = Self.roughStar(count: count, roughness: large ? Double.random(in: 0.25...0.5, using: &random) : Double.random(in: 0.05...0.35, using: &random),
                                      harmonics: large ? min(count / 4, 400) : Int.random(in: 2...7, using: &random),
                                      radius: large ? 0.3 : 0.01, &random)
            if round % 2 == 1 { ring.reverse() }
            let n = ring.count - 1
            #expect(ring.withUnsafeBufferPointer { RingValidation.isSimpleAsStar($0, edges: n) }, "round \(round), \(count) vertices")
            if !large { #expect(RingValidation.firstSelfIntersection(ring, method: .pairs) == nil, "round \(round)") }
        }
    }

    /// What the star proof must never call simple: a ring that goes twice around its centre with every
    /// turn the same way (a pentagram), a ring not closed, and a ring with an edge through the centre.
    @Test("the star proof refuses rings that wind twice, open rings and turns that change sign")
    func starProofRefuses() {
        func ring(_ points: [(Double, Double)]) -> [Coordinate] { points.map { Coordinate(latitude: $0.1, longitude: $0.0) } }
        let pentagram = ring((0...5).map { k in
            let angle = Double(k * 2 % 5) / 5 * 2 * Double.pi
            return (cos(angle), sin(angle))
        })
        #expect(pentagram.withUnsafeBufferPointer { RingValidation.goesAroundOnce($0, edges: 5, seenFrom: Coordinate(latitude: 0, longitude: 0)) } == false)
        #expect(pentagram.withUnsafeBufferPointer { RingValidation.isSimpleAsStar($0, edges: 5) } == false)
        #expect(RingValidation.firstSelfIntersection(pentagram) != nil)
        let square = ring([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)])
        #expect(square.withUnsafeBufferPointer { RingValidation.isSimpleAsStar($0, edges: 4) })
        #expect(square.withUnsafeBufferPointer { RingValidation.goesAroundOnce($0, edges: 4, seenFrom: Coordinate(latitude: 0, longitude: 0.5)) } == false)
        let open = ring([(0, 0), (1, 0), (1, 1), (0, 1), (0, 0.5)])
        #expect(open.withUnsafeBufferPointer { RingValidation.isSimpleAsStar($0, edges: 4) } == false)
        // A bow tie: no point sees every edge turn the same way.
        let bowTie = ring([(0, 0), (1, 1), (1, 0), (0, 1), (0, 0)])
        #expect(bowTie.withUnsafeBufferPointer { RingValidation.isSimpleAsStar($0, edges: 4) } == false)
    }

    /// The bucket sort that orders the sweeps' events and boxes gives exactly `sorted(by:)`'s order: keys
    /// spread out, crowded into a few values (buckets past the insertion sort's size), all equal, spanning
    /// zero with both signed zeros, tiny and huge ranges, and the lengths around its cut-over to `sorted`.
    @Test("bucketSorted orders like sorted(by:)")
    func bucketSortMatchesSorted() {
        struct Item: Equatable { var key: Double; var tag: Int }
        let less = { (a: Item, b: Item) -> Bool in a.key < b.key || (a.key == b.key && a.tag < b.tag) }
        var random = SplitMix64(seed: 77)
        let makers: [(inout SplitMix64) -> Double] = [
            { Double.random(in: -180...180, using: &$0) },
            { Double(Int.random(in: 0..<5, using: &$0)) * 0.25 },
            { _ in 7 },
            { [-0.0, 0.0, 1e-300, -1e-300, 3][Int.random(in: 0..<5, using: &$0)] },
            { 1 + Double(Int.random(in: 0..<1000, using: &$0)) * 0x1p-52 },
            { Double.random(in: -1e300...1e300, using: &$0) },
        ]
        for (m, make) in makers.enumerated() {
            for count in [0, 1, 2, 16, 17, 18, 33, 100, 1_000, 5_000] {
                let items = (0..<count).map { _ in Item(key: make(&random), tag: Int.random(in: 0..<1_000_000, using: &random)) }
                #expect(RingValidation.bucketSorted(items, key: \.key, by: less) == items.sorted(by: less), "maker \(m), \(count) items")
            }
        }
    }
}
