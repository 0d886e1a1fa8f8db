import Foundation
@testable import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// `RingValidation.firstSelfIntersection` (a sweep over edges sorted by longitude with box filters)
/// against a brute force over all edge pairs in exact integer arithmetic, on small random rings whose
/// integer coordinates make touching, collinear and repeated vertices common.
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

    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func sweepMatchesBruteForce(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<2_000 {
            let count = Int.random(in: 3...9, using: &random)
            var points = (0..<count).map { _ in (Int.random(in: 0...4, using: &random), Int.random(in: 0...4, using: &random)) }
            points.append(points[0])
            let coordinates = points.map { Coordinate(latitude: Double($0.1), longitude: Double($0.0)) }
            let sweep = RingValidation.firstSelfIntersection(coordinates)
            let expected = Self.bruteForce(points)
            #expect(sweep?.0 == expected?.0 && sweep?.1 == expected?.1, "ring \(points)")
        }
    }

    @Test("long rings (lattice walks, dented circles, stars) find the brute-force pair", arguments: [11, 12, 13] as [UInt64])
    func longRingsMatchBruteForce(seed: UInt64) {
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
            let found = RingValidation.firstSelfIntersection(coordinates)
            let expected = Self.bruteForce(points)
            #expect(found?.0 == expected?.0 && found?.1 == expected?.1, "round \(round): \(String(describing: found)) vs \(String(describing: expected))")
        }
    }

    @Test("a simple ring of 20,000 vertices is simple")
    func bigSimpleRing() {
        let count = 20_000
        var ring = (0..<count).map { k -> Coordinate in
            let angle = Double(k) / Double(count) * 2 * Double.pi
            let radius = 0.1 + 0.01 * sin(angle * 37)
            return Coordinate(latitude: 45 + radius * sin(angle), longitude: 7 + radius * cos(angle))
        }
        ring.append(ring[0])
        #expect(RingValidation.firstSelfIntersection(ring) == nil)
        ring[10_000] = Coordinate(latitude: 45, longitude: 7.5)  // a spike across the ring
        #expect(RingValidation.firstSelfIntersection(ring) != nil)
    }
}
