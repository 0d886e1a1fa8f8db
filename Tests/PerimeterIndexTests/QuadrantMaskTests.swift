import PerimeterGeometry
import PerimeterTestSupport
import Testing
@testable import PerimeterIndex

/// The quadrant mask of a parity entry's header (``CellRecord/quadrantShift``): a query whose quadrant
/// of the cell has its bit clear answers the entry's reference parity without reading an edge. That is
/// exact only if every edge of the entry then lies strictly beside the box of the segment from the
/// cell's centre to the query, which is what the parity loops' box test would find edge by edge.
@Suite struct QuadrantMaskTests {
    /// A header with the index of its first record after it, for every entry of the index.
    static func headers(_ index: RegionIndex) -> [(cell: Int, at: Int, header: CellRecord)] {
        var result: [(Int, Int, CellRecord)] = []
        for cell in 0 ..< index.grid.cellCount {
            var i = Int(index.cellStart[cell])
            let end = Int(index.cellStart[cell + 1])
            while i < end {
                let header = index.records[i]
                result.append((cell, i, header))
                i += 1 + header.count
            }
        }
        return result
    }

    /// Points of the cell around its centre lines and corners (a ulp either side included), and
    /// random ones.
    static func cellPoints(_ grid: GridLayout, column: Int, row: Int, using rng: inout SplitMix64) -> [Coordinate] {
        let cx = grid.centerX(column), cy = grid.centerY(row)
        let xs = [grid.minX(column), grid.minX(column).nextUp, cx.nextDown, cx, cx.nextUp,
                  grid.minX(column + 1).nextDown, grid.minX(column + 1)]
        let ys = [grid.minY(row), grid.minY(row).nextUp, cy.nextDown, cy, cy.nextUp,
                  grid.minY(row + 1).nextDown, grid.minY(row + 1)]
        var points: [Coordinate] = []
        for x in xs { for y in ys { points.append(Coordinate(latitude: y, longitude: x)) } }
        for _ in 0..<40 {
            points.append(Coordinate(latitude: Double.random(in: grid.minY(row) ... grid.minY(row + 1), using: &rng),
                                     longitude: Double.random(in: grid.minX(column) ... grid.minX(column + 1), using: &rng)))
        }
        for _ in 0..<10 {
            // On a centre line, elsewhere along it.
            points.append(Coordinate(latitude: cy, longitude: Double.random(in: grid.minX(column) ... grid.minX(column + 1), using: &rng)))
            points.append(Coordinate(latitude: Double.random(in: grid.minY(row) ... grid.minY(row + 1), using: &rng), longitude: cx))
        }
        return points
    }

    /// Where a quadrant's bit is clear, every edge of the entry is strictly beside the box of c–q (c the
    /// centre), for points all over the cell, on its centre lines and a ulp off them; entries that store
    /// their own reference point have all four bits, entries without edges none. The mask also skips
    /// something: some parity entries lack some quadrant (else the fast path would never run).
    @Test(arguments: [61 as UInt64, 62, 63])
    func clearQuadrantsHoldNoEdgeNearTheSegment(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 50, using: &rng)
        let index = RegionIndex(regions: regions)
        let grid = index.grid
        var parityEntries = 0, partial = 0, skips = 0, wrong = 0
        for (cell, at, header) in Self.headers(index) {
            let mask = header.quadrants
            guard header.count > 0 else {
                #expect(mask == 0, "entry without edges at record \(at) has quadrant mask \(mask)")
                continue
            }
            parityEntries += 1
            if header.flags & CellEntry.shiftedReferenceFlag != 0 {
                #expect(mask == CellRecord.allQuadrants, "entry with its own reference point has mask \(mask)")
                continue
            }
            if mask != CellRecord.allQuadrants { partial += 1 }
            let column = cell % grid.columns, row = cell / grid.columns
            let cx = grid.centerX(column), cy = grid.centerY(row)
            var vertices: [CellRecord] = []
            for k in (at + 1) ..< (at + 1 + header.count) { vertices.append(index.records[k]) }
            for q in Self.cellPoints(grid, column: column, row: row, using: &rng) {
                // Every quadrant whose closed half-planes hold q (two or four on a centre line): the query
                // may pick any of them.
                let xs = q.longitude > cx ? [1] : q.longitude < cx ? [0] : [0, 1]
                let ys = q.latitude > cy ? [2] : q.latitude < cy ? [0] : [0, 2]
                for quadrant in xs.flatMap({ x in ys.map { x | $0 } }) where mask & (1 << quadrant) == 0 {
                    skips += 1
                    let lowX = min(cx, q.longitude), highX = max(cx, q.longitude)
                    let lowY = min(cy, q.latitude), highY = max(cy, q.latitude)
                    for (a, b) in zip(vertices, vertices.dropFirst()) where !a.isChainBreak && !b.isChainBreak {
                        let beside = max(a.x, b.x) < lowX || min(a.x, b.x) > highX
                            || max(a.y, b.y) < lowY || min(a.y, b.y) > highY
                        if !beside {
                            wrong += 1
                            if wrong <= 5 {
                                Issue.record("cell \(cell): quadrant \(quadrant) clear in mask \(mask), but edge (\(a.x), \(a.y))–(\(b.x), \(b.y)) meets the box of c–\(q)")
                            }
                        }
                    }
                }
            }
        }
        #expect(wrong == 0)
        #expect(parityEntries > 100)
        #expect(partial > parityEntries / 10, "\(partial) of \(parityEntries) parity entries lack a quadrant")
        #expect(skips > 1000)
    }

    /// The answers equal brute force at the points where the query's quadrant changes: on the centre
    /// lines of cells, a ulp either side, at the centres and near the cell corners.
    @Test(arguments: [71 as UInt64, 72])
    func centreLinePointsMatchBruteForce(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 50, using: &rng)
        let index = RegionIndex(regions: regions)
        let grid = index.grid
        var points: [Coordinate] = []
        // Cells that hold a parity entry, where the mask matters, and a few others.
        let cells = Set(Self.headers(index).filter { $0.header.count > 0 }.map(\.cell)).sorted()
        #expect(!cells.isEmpty)
        for _ in 0..<150 {
            let cell = cells[Int.random(in: 0 ..< cells.count, using: &rng)]
            points += Self.cellPoints(grid, column: cell % grid.columns, row: cell / grid.columns, using: &rng)
        }
        for _ in 0..<20 {
            let column = Int.random(in: 0..<grid.columns, using: &rng), row = Int.random(in: 0..<grid.rows, using: &rng)
            points += Self.cellPoints(grid, column: column, row: row, using: &rng)
        }
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }
}
