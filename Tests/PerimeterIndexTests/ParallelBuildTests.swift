import PerimeterGeometry
import PerimeterTestSupport
import Testing
@testable import PerimeterIndex

/// A build that rasterizes on several threads, and the radix sort of each polygon's (cell, edge)
/// pairs, must give the very index a one-thread build with a comparison sort gives.
@Suite struct ParallelBuildTests {
    /// Mixed shapes plus long rough rings (thousands of pairs each at small cells: the radix path).
    static func regions(seed: UInt64) -> [Region] {
        var rng = SplitMix64(seed: seed)
        var regions = TestShapes.mixedRegions(count: 40, using: &rng)
        for k in 0..<6 {
            let ring = TestShapes.starRing(Double(k) * 0.7, 0.3, radius: 0.6, vertices: 300 + 200 * k,
                                           snapped: k % 2 == 0, using: &rng)
            regions.append(Region(.polygons([Polygon(rings: [ring])])))
            regions.append(Region(.polygons([Polygon(rings: [TestShapes.scribble(0.5, 0.5, radius: 0.4, vertices: 120 + 40 * k,
                                                                                 using: &rng)])])))
        }
        return regions
    }

    static func layout(_ index: RegionIndex) -> [String] {
        var lines = ["cells \(index.cellStart)"]
        for e in index.records { lines.append("record \(e.x.bitPattern) \(e.y.bitPattern)") }
        return lines
    }

    @Test("2 and 3 threads build the one-thread index, record for record", arguments: [7 as UInt64, 8, 9])
    func partsGiveTheSameIndex(seed: UInt64) {
        let regions = Self.regions(seed: seed)
        for side in [0.004, 0.03] as [Double?] + [nil] {
            let one = RegionIndex(regions: regions, forcedCellSide: side, threads: 1)
            let expected = Self.layout(one)
            #expect(one.statistics.entries > 300)
            for threads in [2, 3] {
                let several = RegionIndex(regions: regions, forcedCellSide: side, threads: threads)
                #expect(several.alwaysTested == one.alwaysTested)
                #expect(several.seamCandidates == one.seamCandidates)
                #expect(Self.layout(several) == expected, "\(threads) threads, cell side \(String(describing: side))")
            }
        }
    }

    @Test("the radix sort orders pairs as a comparison sort does")
    func radixSortMatchesSort() {
        var rng = SplitMix64(seed: 42)
        var builder = IndexBuilder(regions: [])
        for n in [0, 1, 255, 256, 257, 5_000, 40_000] {
            for spread in [1 as UInt64, 3, 2_000, 1 << 22] {
                // Pairs as rasterizeEdge appends them: ascending edge numbers, cells in any order.
                var pairs: [UInt64] = []
                var edge: UInt64 = 0
                while pairs.count < n {
                    for _ in 0..<(1 + rng.next() % 4) where pairs.count < n {
                        pairs.append((1000 + rng.next() % spread) << 32 | edge)
                    }
                    edge += 1
                }
                builder.pairs = pairs
                builder.sortPairsByCell()
                #expect(builder.pairs == pairs.sorted(), "\(n) pairs over \(spread) cells")
            }
        }
    }
}
