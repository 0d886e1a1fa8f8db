import PerimeterGeometry
import Testing
import PerimeterTestSupport
@testable import PerimeterIndex

/// The query's answer array and its fast path against its exact fallback, each against brute force.
@Suite struct RegionIndexResultTests {
    /// Whatever the array held before (any length, shared storage or not), it holds the answer after,
    /// and a copy of its old contents is left alone.
    @Test(arguments: [11 as UInt64, 12, 13])
    func anyPreviousContentsAreReplaced(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 60, using: &rng)
        let index = RegionIndex(regions: regions)
        let points = TestShapes.queryPoints(for: regions, index: index, count: 2000, using: &rng)
        var result: [Int32] = []
        var mismatches = 0, copiesChanged = 0
        for p in points {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0: result = (0..<Int.random(in: 0...40, using: &rng)).map { _ in Int32.random(in: -5...99, using: &rng) }
            case 1: result.removeAll()
            default: break  // the previous query's answer, reused as callers do
            }
            let held = Bool.random(using: &rng) ? result : nil
            let before = held.map { Array($0) }
            index.regions(containing: p, into: &result)
            let expected = RegionIndexPropertyTests.bruteForce(regions, p)
            if result != expected {
                mismatches += 1
                if mismatches <= 5 { Issue.record("at \(p): index \(result), brute force \(expected)") }
            }
            if let held, held != before { copiesChanged += 1 }
        }
        #expect(mismatches == 0)
        #expect(copiesChanged == 0)
    }

    /// Dozens of regions hold the same points: long answers, and cells with many entries of one kind.
    @Test func manyOverlappingRegions() {
        var rng = SplitMix64(seed: 21)
        var regions: [Region] = []
        for k in 0..<70 {
            let size = 0.2 + Double(k) * 0.01
            switch k % 3 {
            case 0:
                regions.append(Region(.polygons([Polygon(rings: [TestShapes.rectangle(
                    TestShapes.snap(2 - size), TestShapes.snap(46 - size / 2), TestShapes.snap(2 + size), TestShapes.snap(46 + size / 2))])])))
            case 1:
                regions.append(Region(.polygons([Polygon(rings: [TestShapes.starRing(2, 46, radius: size, vertices: 5 + k,
                                                                                     snapped: true, using: &rng)])])))
            default:
                regions.append(Region(.circle(center: Coordinate(latitude: 46, longitude: 2), radius: 5_000 + Double(k) * 300)))
            }
        }
        let index = RegionIndex(regions: regions)
        var points = TestShapes.queryPoints(for: regions, index: index, count: 1500, using: &rng)
        for _ in 0..<500 {
            points.append(Coordinate(latitude: 46 + Double.random(in: -0.05...0.05, using: &rng),
                                     longitude: 2 + Double.random(in: -0.05...0.05, using: &rng)))
        }
        var most = 0
        var result: [Int32] = []
        for p in points {
            index.regions(containing: p, into: &result)
            most = max(most, result.count)
        }
        #expect(most > 40)
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }

    /// Points on the lines through polygon edges, beyond the edges' ends, and points next to them: the
    /// determinants the fast path reads are zero or tiny there, so it must hand over to the exact loop.
    @Test(arguments: [31 as UInt64, 32])
    func pointsOnEdgeLinesMatchBruteForce(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 40, using: &rng)
        let index = RegionIndex(regions: regions)
        var points: [Coordinate] = []
        for region in regions {
            guard case .polygons(let polygons) = region.shape else { continue }
            for ring in polygons.flatMap(\.rings) where ring.count > 1 {
                for _ in 0..<8 {
                    let k = Int.random(in: 1..<ring.count, using: &rng)
                    let a = ring[k - 1], b = ring[k]
                    for t in [-1.0, 2.0, 0.25, 0.75] {
                        points.append(Coordinate(latitude: a.latitude + t * (b.latitude - a.latitude),
                                                 longitude: a.longitude + t * (b.longitude - a.longitude)))
                    }
                    points.append(Coordinate(latitude: b.latitude.nextUp, longitude: b.longitude))
                    points.append(Coordinate(latitude: b.latitude, longitude: b.longitude.nextDown))
                }
            }
        }
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }
}
