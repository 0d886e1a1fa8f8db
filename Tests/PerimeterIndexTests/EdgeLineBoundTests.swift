import PerimeterGeometry
import PerimeterTestSupport
import Testing
@testable import PerimeterIndex

/// The static bound for the orientations of c and q against an edge's line
/// (``IndexBuilder/edgeLineBound(_:)``), which the query computes per entry from the entry's own bound
/// instead of filtering each determinant.
@Suite struct EdgeLineBoundTests {
    /// Shewchuk's filter bound for a determinant whose differences are at most `reach` in magnitude:
    /// what `Planar.certainDeterminant` would compare with, at most.
    static func filterBound(reach: Double) -> Double {
        3.3306690738754716e-16 * 2 * reach * reach + 0x1p-1060
    }

    /// For every parity entry, the reach the query derives from the header's bound is at least the
    /// entry's true reach (largest coordinate distance from its reference point to a vertex), and the
    /// line bound is at least the filter bound for differences of that reach plus two cell sides.
    @Test(arguments: [81 as UInt64, 82])
    func derivedReachAndBoundCoverTheEntries(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 50, using: &rng)
        let index = RegionIndex(regions: regions)
        let grid = index.grid
        let reachPerBound = grid.inverseSide * IndexBuilder.reachPerBoundSide
        var checked = 0
        for (cell, at, header) in BoxMaskTests.headers(index) where header.count > 0 {
            let column = cell % grid.columns, row = cell / grid.columns
            var first = at + 1
            // Every reference point a query may start at: each quadrant's centre, or the stored point.
            var references = (0 ..< 4).map { k in
                (x: grid.quadrantCenterX(column, east: k & 1), y: grid.quadrantCenterY(row, north: k >> 1 & 1))
            }
            if header.flags & CellEntry.shiftedReferenceFlag != 0 {
                references = [(x: index.records[at + 1].x, y: index.records[at + 1].y)]
                first += 1
            }
            var reach = 0.0
            for k in first ..< (at + 1 + header.count) where !index.records[k].isChainBreak {
                for c in references {
                    reach = max(reach, abs(index.records[k].x - c.x), abs(index.records[k].y - c.y))
                }
            }
            let derived = header.bound * reachPerBound
            #expect(derived >= reach, "entry at \(at): derived reach \(derived) < \(reach)")
            let line = IndexBuilder.edgeLineBound(derived + 2 * grid.side)
            #expect(line >= Self.filterBound(reach: reach + 2 * grid.side))
            checked += 1
        }
        #expect(checked > 100)
        #expect(IndexBuilder.edgeLineBound(.infinity) == .infinity)
        #expect(IndexBuilder.edgeLineBound(0x1p500) == .infinity)
    }

    /// Triangles with an edge on a line through a cell's centre (the reference point): o(a, b, c) is
    /// exactly zero, the static bound cannot settle its sign, and the entry must be decided by the exact
    /// loop. Points all over those cells answer as brute force does.
    @Test func edgeLinesThroughCellCentresMatchBruteForce() {
        let frame = Region(.polygons([Polygon(rings: [TestShapes.rectangle(0, 0, 1, 1)])]))
        let side = 1.0 / 16
        let grid = RegionIndex(regions: [frame], forcedCellSide: side).grid
        var regions = [frame]
        var cells: [(column: Int, row: Int)] = []
        let h = 0x1p-7  // a multiple of the centres' ulp: c + k·h is exact within the binade
        for column in 2 ..< grid.columns - 2 {
            for row in stride(from: 2 + column % 3, to: grid.rows - 2, by: 3) {
                let cx = grid.centerX(column), cy = grid.centerY(row)
                let c = Coordinate(latitude: cy, longitude: cx)
                // Edge a–b on the diagonal through c, the triangle's third vertex off it; the edge's line
                // passes through c, the edge itself does not.
                let a = Coordinate(latitude: cy + h, longitude: cx + h)
                let b = Coordinate(latitude: cy + 3 * h, longitude: cx + 3 * h)
                let p = Coordinate(latitude: cy + h, longitude: cx + 3 * h)
                guard Planar.orientation(a, b, c) == 0 else { continue }
                // Mirrored in every other cell, so that both turn directions and quadrants occur.
                let ring = (column + row) % 2 == 0 ? [a, b, p]
                    : [Coordinate(latitude: cy - h, longitude: cx - h), Coordinate(latitude: cy - 3 * h, longitude: cx - 3 * h),
                       Coordinate(latitude: cy - 3 * h, longitude: cx - h)]
                regions.append(Region(.polygons([Polygon(rings: [ring])])))
                cells.append((column, row))
            }
        }
        #expect(cells.count > 20)
        let index = RegionIndex(regions: regions, forcedCellSide: side)
        #expect(index.grid.originX == grid.originX && index.grid.originY == grid.originY && index.grid.side == grid.side)
        var rng = SplitMix64(seed: 91)
        var points: [Coordinate] = []
        for (column, row) in cells {
            points += BoxMaskTests.cellPoints(grid, column: column, row: row, using: &rng)
            let cx = grid.centerX(column), cy = grid.centerY(row)
            for k in [0.5, 1, 2, 2.5, 3, 3.5] {
                for d in [-h / 2, 0, h / 2] {
                    points.append(Coordinate(latitude: cy + k * h + d, longitude: cx + k * h))
                    points.append(Coordinate(latitude: cy - k * h + d, longitude: cx - k * h))
                }
            }
        }
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }
}
