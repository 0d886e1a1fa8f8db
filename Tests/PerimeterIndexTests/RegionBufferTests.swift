import PerimeterGeometry
import Testing
import PerimeterTestSupport
@testable import PerimeterIndex

/// The query's ``RegionBuffer`` form: its answers against brute force, the room it makes, and copies.
@Suite struct RegionBufferTests {
    /// Polygons, circles and corridors, malformed regions (tested on every query), and points all over
    /// and off the grid, on the ±180° meridian, off the valid range, NaN: one buffer reused for every
    /// point, copies taken at random, each answer equal to brute force and to the array form.
    @Test(arguments: [41 as UInt64, 42, 43])
    func answersMatchBruteForceWithAlwaysTestedRegions(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var regions = TestShapes.mixedRegions(count: 50, using: &rng)
        // Malformed regions among the rest (numbers in the middle and at the end), one of them large.
        let nanRing = Region(.polygons([Polygon(rings: [[Coordinate(latitude: .nan, longitude: 0),
                                                          Coordinate(latitude: 1, longitude: 1)]])]))
        let negativeBuffer = Region(.circle(center: Coordinate(latitude: 46, longitude: 2), radius: 50_000), buffer: -1)
        regions.insert(negativeBuffer, at: 20)
        regions.append(nanRing)
        let seam = Region(.polygons([Polygon(rings: [TestShapes.rectangle(170, -10, 180, 10)])]))
        regions.append(seam)
        let index = RegionIndex(regions: regions)
        #expect(index.statistics.alwaysTestedRegions == 2)
        var points = TestShapes.queryPoints(for: regions, index: index, count: 3000, using: &rng)
        points += [Coordinate(latitude: 0, longitude: 180), Coordinate(latitude: 5, longitude: -180),
                   Coordinate(latitude: 0, longitude: 181), Coordinate(latitude: 91, longitude: 2),
                   Coordinate(latitude: .nan, longitude: 2), Coordinate(latitude: 46, longitude: .nan),
                   Coordinate(latitude: -60, longitude: -100), Coordinate(latitude: 5, longitude: 175),
                   // The valid range's edges and the doubles just beyond them.
                   Coordinate(latitude: 90, longitude: 2), Coordinate(latitude: -90, longitude: 2),
                   Coordinate(latitude: (90 as Double).nextUp, longitude: 2),
                   Coordinate(latitude: (-90 as Double).nextDown, longitude: 2),
                   Coordinate(latitude: 46, longitude: (180 as Double).nextDown),
                   Coordinate(latitude: 46, longitude: (-180 as Double).nextUp),
                   Coordinate(latitude: 46, longitude: (180 as Double).nextUp)]
        points.shuffle(using: &rng)
        var buffer = RegionBuffer(capacity: 1)
        var copies: [(RegionBuffer, [Int32])] = []
        var mismatches = 0, longest = 0, merged = 0
        for p in points {
            if Int.random(in: 0..<10, using: &rng) == 0 { copies.append((buffer, Array(buffer))) }
            index.regions(containing: p, into: &buffer)
            let expected = RegionIndexPropertyTests.bruteForce(regions, p)
            longest = max(longest, expected.count)
            if expected.contains(20) { merged += 1 }
            if Array(buffer) != expected || index.regions(containing: p) != expected {
                mismatches += 1
                if mismatches <= 5 { Issue.record("at \(p): buffer \(Array(buffer)), brute force \(expected)") }
            }
        }
        #expect(mismatches == 0)
        #expect(longest >= 3)  // overlapping regions: several at once
        #expect(merged > 100)  // the always-tested circle is merged into answers of the cells' scans
        // A copy keeps what it held when it was taken, whatever the original answered since.
        #expect(copies.count > 100)
        #expect(copies.allSatisfy { Array($0.0) == $0.1 })
    }

    /// A copy shares the memory until one of them is written; the writer gets memory of its own first,
    /// and a buffer that owns enough memory alone keeps it.
    @Test func copiesDoNotShareWrittenMemory() {
        let regions = (0..<6).map { k in
            Region(.polygons([Polygon(rings: [TestShapes.rectangle(Double(k) * 0.01, 0, 1, 1)])]))
        }
        let index = RegionIndex(regions: regions)
        var a = RegionBuffer()
        index.regions(containing: Coordinate(latitude: 0.5, longitude: 0.5), into: &a)
        #expect(Array(a) == [0, 1, 2, 3, 4, 5])
        let owned = ObjectIdentifier(a.storage)  // not a reference: the buffer stays the storage's only owner
        index.regions(containing: Coordinate(latitude: 0.5, longitude: 0.025), into: &a)
        #expect(Array(a) == [0, 1, 2])
        #expect(ObjectIdentifier(a.storage) == owned)  // alone and large enough: no new memory
        var b = a
        #expect(b.storage === a.storage)
        index.regions(containing: Coordinate(latitude: 0.5, longitude: 0.5), into: &b)
        #expect(b.storage !== a.storage)
        #expect(Array(a) == [0, 1, 2])
        #expect(Array(b) == [0, 1, 2, 3, 4, 5])
        index.regions(containing: Coordinate(latitude: 2, longitude: 2), into: &a)
        #expect(a.isEmpty)
        #expect(Array(b) == [0, 1, 2, 3, 4, 5])
    }

    /// A buffer smaller than the index's answers gets room for all of them before the scan, once.
    @Test func smallBufferGrowsOnceToTheAnswerCapacity() {
        let regions = (0..<40).map { k in
            Region(.circle(center: Coordinate(latitude: 10, longitude: 10), radius: 1_000 + 100 * Double(k)))
        }
        let index = RegionIndex(regions: regions)
        var buffer = RegionBuffer(capacity: 2)
        index.regions(containing: Coordinate(latitude: 10, longitude: 10), into: &buffer)
        #expect(Array(buffer) == (0..<40).map(Int32.init))
        #expect(buffer.capacity >= index.answerCapacity)
        let grown = ObjectIdentifier(buffer.storage)
        var rng = SplitMix64(seed: 7)
        for _ in 0..<500 {
            let p = Coordinate(latitude: 10 + Double.random(in: -0.06...0.06, using: &rng),
                               longitude: 10 + Double.random(in: -0.06...0.06, using: &rng))
            index.regions(containing: p, into: &buffer)
            #expect(Array(buffer) == RegionIndexPropertyTests.bruteForce(regions, p))
        }
        #expect(ObjectIdentifier(buffer.storage) == grown)
    }

    /// ``RegionIndex/answerCapacity`` bounds every answer (the query writes up to it without checks) and
    /// is reached: the most regions of one cell, counted here from the regions' own tests at the cells'
    /// corners, centres and random points, never exceed it.
    @Test(arguments: [51 as UInt64, 52])
    func answerCapacityBoundsEveryAnswer(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var regions = TestShapes.mixedRegions(count: 80, using: &rng)
        regions.append(Region(.circle(center: Coordinate(latitude: 46, longitude: 2), radius: 1), buffer: -1))
        let index = RegionIndex(regions: regions)
        let points = TestShapes.queryPoints(for: regions, index: index, count: 4000, using: &rng)
        var most = 0
        for p in points { most = max(most, RegionIndexPropertyTests.bruteForce(regions, p).count) }
        #expect(most > 3)
        #expect(most <= index.answerCapacity)
        #expect(index.answerCapacity <= regions.count)
        // The bound is the builder's runs: recount them from the headers' region numbers per cell.
        var recount = 0
        for cell in 0 ..< index.cellStart.count - 1 {
            var seen = Set<Int32>()
            var i = Int(index.cellStart[cell])
            while i < Int(index.cellStart[cell + 1]) {
                seen.insert(index.records[i].region)
                i += 1 + index.records[i].count
            }
            recount = max(recount, seen.count)
        }
        #expect(index.answerCapacity == recount + index.alwaysTested.count)
    }
}
