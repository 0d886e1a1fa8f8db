import PerimeterGeometry
import Testing
import PerimeterTestSupport
@testable import PerimeterIndex

/// The index against brute force (`Region.contains` on every region) on random shapes.
@Suite struct RegionIndexPropertyTests {
    static func bruteForce(_ regions: [Region], _ p: Coordinate) -> [Int32] {
        regions.indices.filter { regions[$0].contains(p) }.map(Int32.init)
    }

    /// Compares every point, reporting the first few mismatches with their coordinates: both forms of the
    /// query (an array, and one ``RegionBuffer`` reused for every point, as the engine keeps it).
    static func expectAgreement(_ regions: [Region], _ index: RegionIndex, _ points: [Coordinate],
                                sourceLocation: SourceLocation = #_sourceLocation) {
        var mismatches = 0
        var buffer: [Int32] = []
        buffer.reserveCapacity(64)
        var kept = RegionBuffer(capacity: 4)
        for p in points {
            index.regions(containing: p, into: &buffer)
            index.regions(containing: p, into: &kept)
            let expected = bruteForce(regions, p)
            if buffer != expected || Array(kept) != expected {
                mismatches += 1
                if mismatches <= 5 {
                    Issue.record("at \(p): index \(buffer), buffer \(Array(kept)), brute force \(expected)",
                                 sourceLocation: sourceLocation)
                }
            }
        }
        #expect(mismatches == 0, "\(mismatches) of \(points.count) points disagree", sourceLocation: sourceLocation)
    }

    @Test(arguments: [1 as UInt64, 2, 3, 4, 5, 6])
    func mixedShapesMatchBruteForce(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 60, using: &rng)
        let index = RegionIndex(regions: regions)
        #expect(index.count == regions.count)
        #expect(index.statistics.alwaysTestedRegions == 0)
        let points = TestShapes.queryPoints(for: regions, index: index, count: 3000, using: &rng)
        Self.expectAgreement(regions, index, points)
    }

    /// Small forced cells: many edges cross cell lines, many cells are full.
    @Test(arguments: [0.003, 0.02, 0.25])
    func forcedCellSidesMatchBruteForce(side: Double) {
        var rng = SplitMix64(seed: UInt64(side * 1e6))
        let regions = TestShapes.mixedRegions(count: 40, using: &rng)
        let index = RegionIndex(regions: regions, forcedCellSide: side)
        #expect(index.grid.side == side)
        let points = TestShapes.queryPoints(for: regions, index: index, count: 3000, using: &rng)
        Self.expectAgreement(regions, index, points)
    }

    /// Polygons whose vertices and edges sit exactly on cell centres (the reference points) and on
    /// cell lines: the reference must move and crossings through vertices must be counted once.
    @Test func shapesAlignedWithTheGrid() {
        let anchor = Region(.polygons([Polygon(rings: [TestShapes.rectangle(0, 0, 1, 1)])]))
        let side = 1.0 / 16
        let first = RegionIndex(regions: [anchor], forcedCellSide: side)
        let g = first.grid
        var regions = [anchor]
        var rng = SplitMix64(seed: 99)
        for _ in 0..<40 {
            // Vertices drawn among cell centres and cell corners.
            let ring = (0..<Int.random(in: 3...8, using: &rng)).map { _ -> Coordinate in
                let c = Int.random(in: 4...(g.columns - 5), using: &rng), r = Int.random(in: 4...(g.rows - 5), using: &rng)
                return Bool.random(using: &rng)
                    ? Coordinate(latitude: g.centerY(r), longitude: g.centerX(c))
                    : Coordinate(latitude: g.minY(r), longitude: g.minX(c))
            }
            regions.append(Region(.polygons([Polygon(rings: [ring + [ring[0]]])])))
        }
        let index = RegionIndex(regions: regions, forcedCellSide: side)
        #expect(index.grid.originX == g.originX && index.grid.originY == g.originY && index.grid.columns == g.columns)
        var points: [Coordinate] = []
        for r in 0..<g.rows {
            for c in 0..<g.columns {
                points.append(Coordinate(latitude: g.centerY(r), longitude: g.centerX(c)))
                points.append(Coordinate(latitude: g.minY(r), longitude: g.minX(c)))
                points.append(Coordinate(latitude: g.minY(r), longitude: g.centerX(c)))
                points.append(Coordinate(latitude: g.centerY(r) + Double.random(in: -0.03...0.03, using: &rng),
                                         longitude: g.minX(c)))
            }
        }
        Self.expectAgreement(regions, index, points)
    }

    /// Random points across the benchmark-like spread, only agreement, many regions.
    @Test func manyRegionsMatchBruteForce() {
        var rng = SplitMix64(seed: 2024)
        let regions = TestShapes.mixedRegions(count: 400, using: &rng)
        let index = RegionIndex(regions: regions)
        let points = TestShapes.queryPoints(for: regions, index: index, count: 2000, using: &rng)
        Self.expectAgreement(regions, index, points)
    }
}
