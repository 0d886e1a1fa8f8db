import PerimeterGeometry
import PerimeterTestSupport
import Testing
@testable import PerimeterIndex

/// The box mask and quadrant parities of a parity entry's header (``CellRecord/subCellCount``,
/// ``CellRecord/quadrantParityShift``): a query whose sub-cell has its bit clear answers the parity of
/// its quadrant's centre without reading an edge. That is exact only if every edge of the entry then
/// lies strictly beside the box of the segment from that centre to the query, which is what the parity
/// loops' box test would find edge by edge, and if the stored parity is the polygon's there.
@Suite struct BoxMaskTests {
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

    /// Points of the cell around its centre lines, its quadrants' centre lines (where the sub-cell
    /// changes) and its corners (a ulp either side included), and random ones.
    static func cellPoints(_ grid: GridLayout, column: Int, row: Int, using rng: inout SplitMix64) -> [Coordinate] {
        let cx = grid.centerX(column), cy = grid.centerY(row)
        let xs = [grid.minX(column), grid.minX(column).nextUp, cx.nextDown, cx, cx.nextUp,
                  grid.minX(column + 1).nextDown, grid.minX(column + 1)]
            + [false, true].map { grid.quadrantCenterX(column, east: $0 ? 1 : 0) }.flatMap { [$0.nextDown, $0, $0.nextUp] }
        let ys = [grid.minY(row), grid.minY(row).nextUp, cy.nextDown, cy, cy.nextUp,
                  grid.minY(row + 1).nextDown, grid.minY(row + 1)]
            + [false, true].map { grid.quadrantCenterY(row, north: $0 ? 1 : 0) }.flatMap { [$0.nextDown, $0, $0.nextUp] }
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

    /// The (quadrant, sub-cell) pairs a query at `q` may take in the cell (column, row): a quadrant
    /// by the signs of q − c (both halves on a centre line), then a sub-cell of it by the signs of q minus
    /// the quadrant's centre (both on its lines).
    static func possibleSubCells(_ q: Coordinate, _ grid: GridLayout, column: Int, row: Int)
        -> [(quadrant: Int, subCell: Int, center: Coordinate)] {
        func sides(_ v: Double, _ c: Double) -> [Bool] { v > c ? [true] : v < c ? [false] : [false, true] }
        var result: [(Int, Int, Coordinate)] = []
        for east in sides(q.longitude, grid.centerX(column)) {
            for north in sides(q.latitude, grid.centerY(row)) {
                let center = Coordinate(latitude: grid.quadrantCenterY(row, north: north ? 1 : 0),
                                        longitude: grid.quadrantCenterX(column, east: east ? 1 : 0))
                for beyondX in sides(q.longitude, center.longitude) {
                    for beyondY in sides(q.latitude, center.latitude) {
                        let i = (east ? 2 : 0) + (beyondX ? 1 : 0), j = (north ? 2 : 0) + (beyondY ? 1 : 0)
                        result.append(((east ? 1 : 0) + (north ? 2 : 0), i + 4 * j, center))
                    }
                }
            }
        }
        return result
    }

    /// Where a sub-cell's bit is clear, every edge of the entry is strictly beside the box of the segment
    /// from the quadrant's centre to q, for points all over the cell, on its centre lines, its
    /// quadrants' centre lines and a ulp off them; entries that store their own reference point have
    /// every bit, entries without edges none. The mask also skips something: some parity entries lack
    /// a sub-cell (else the fast path would never run), and some lack a sub-cell while they have
    /// every quadrant (what the four quadrant bits of earlier could not skip).
    @Test(arguments: [61 as UInt64, 62, 63])
    func clearSubCellsHoldNoEdgeNearTheSegment(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 50, using: &rng)
        let index = RegionIndex(regions: regions)
        let grid = index.grid
        var parityEntries = 0, partial = 0, finer = 0, skips = 0, wrong = 0
        for (cell, at, header) in Self.headers(index) {
            let mask = header.boxMask
            guard header.count > 0 else {
                #expect(mask == 0, "entry without edges at record \(at) has box mask \(mask)")
                continue
            }
            parityEntries += 1
            if header.flags & CellEntry.shiftedReferenceFlag != 0 {
                #expect(mask == CellRecord.allSubCells, "entry with its own reference point has mask \(mask)")
                continue
            }
            if mask != CellRecord.allSubCells { partial += 1 }
            // Every quadrant has a sub-cell set, and some sub-cell is clear.
            let quadrantSubCells: [UInt32] = [0x0033, 0x00cc, 0x3300, 0xcc00]
            if quadrantSubCells.allSatisfy({ mask & $0 != 0 }) && mask != CellRecord.allSubCells { finer += 1 }
            let column = cell % grid.columns, row = cell / grid.columns
            var vertices: [CellRecord] = []
            for k in (at + 1) ..< (at + 1 + header.count) { vertices.append(index.records[k]) }
            for q in Self.cellPoints(grid, column: column, row: row, using: &rng) {
                for (_, subCell, c) in Self.possibleSubCells(q, grid, column: column, row: row) where mask & (1 << subCell) == 0 {
                    skips += 1
                    let lowX = min(c.longitude, q.longitude), highX = max(c.longitude, q.longitude)
                    let lowY = min(c.latitude, q.latitude), highY = max(c.latitude, q.latitude)
                    for (a, b) in zip(vertices, vertices.dropFirst()) where !a.isChainBreak && !b.isChainBreak {
                        let beside = max(a.x, b.x) < lowX || min(a.x, b.x) > highX
                            || max(a.y, b.y) < lowY || min(a.y, b.y) > highY
                        if !beside {
                            wrong += 1
                            if wrong <= 5 {
                                Issue.record("cell \(cell): sub-cell \(subCell) clear in mask \(mask), but edge (\(a.x), \(a.y))–(\(b.x), \(b.y)) meets the box of \(c)–\(q)")
                            }
                        }
                    }
                }
            }
        }
        #expect(wrong == 0)
        #expect(parityEntries > 100)
        #expect(partial > parityEntries / 10, "\(partial) of \(parityEntries) parity entries lack a sub-cell")
        #expect(finer > parityEntries / 20, "\(finer) of \(parityEntries) parity entries lack a sub-cell in every quadrant's set")
        #expect(skips > 1000)
    }

    /// Each quadrant parity of a parity entry is its polygon's at the quadrant's centre (by brute force
    /// on the region's polygon: the entries of a cell are one per polygon, so a region of one polygon is
    /// compared), and an entry that stores its reference point has its parity in all four bits.
    @Test(arguments: [65 as UInt64, 66])
    func quadrantParitiesArePolygonParities(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 50, using: &rng)
        let index = RegionIndex(regions: regions)
        let grid = index.grid
        var checked = 0, inside = 0
        for (cell, at, header) in Self.headers(index) where header.count > 0 {
            let parities = header.quadrantParities
            if header.flags & CellEntry.shiftedReferenceFlag != 0 {
                let expected: UInt32 = header.flags & CellEntry.insideFlag != 0 ? 0b1111 : 0
                #expect(parities == expected, "stored-reference entry at \(at): parities \(parities)")
                continue
            }
            let region = regions[Int(header.region)]
            guard case .polygons(let polygons) = region.shape, polygons.count == 1, region.buffer == 0 else { continue }
            let column = cell % grid.columns, row = cell / grid.columns
            for k in 0 ..< 4 {
                let c = Coordinate(latitude: grid.quadrantCenterY(row, north: k >> 1 & 1),
                                   longitude: grid.quadrantCenterX(column, east: k & 1))
                let expected = polygons[0].contains(c)
                #expect((parities >> k) & 1 == (expected ? 1 : 0), "entry at \(at), quadrant \(k): parity \(parities)")
                checked += 1
                if expected { inside += 1 }
            }
        }
        #expect(checked > 400)
        #expect(inside > 0 && inside < checked)
    }

    /// A header keeps its fields apart: region, flags, count, mask and parities read back as written, and
    /// the bound reads back as the smallest `Float` at or above it (never below: a smaller bound would be
    /// unsafe).
    @Test func headerFieldsReadBack() {
        var rng = SplitMix64(seed: 64)
        let bounds: [Double] = [0, 0x1p-1060, 1e-300, 1e-45, 1.2e-38, 3.3e-19, 0.1, 1, 1e38, 3.5e38, 1e300, .infinity]
        for bound in bounds + (0..<200).map { _ in
            Double(sign: .plus, exponent: Int.random(in: -200 ... 130, using: &rng), significand: Double.random(in: 1 ..< 2, using: &rng))
        } {
            let region = Int32.random(in: 0 ... .max, using: &rng)
            let flags = UInt32.random(in: 0 ... 7, using: &rng)
            let mask = UInt32.random(in: 0 ... 0xffff, using: &rng)
            let parities = UInt32.random(in: 0 ... 0b1111, using: &rng)
            let count = [0, 1, CellEntry.maximumRecordCount, Int.random(in: 0 ... CellEntry.maximumRecordCount, using: &rng)]
                .randomElement(using: &rng)!
            let header = CellRecord.header(region: region, flags: flags, boxMask: mask, quadrantParities: parities,
                                           count: count, bound: bound)
            #expect(header.region == region && header.flags == flags && header.boxMask == mask && header.count == count)
            #expect(header.quadrantParities == parities)
            #expect(header.bound >= bound, "bound \(bound) read back as \(header.bound)")
            #expect(header.bound == bound || Double(Float(header.bound).nextDown) < bound,
                    "bound \(bound) read back as \(header.bound), more than one Float step above")
        }
    }

    /// The answers equal brute force at the points where the query's quadrant or sub-cell changes: on
    /// the centre lines of cells and of their quadrants, a ulp either side, at the centres and near the
    /// cell corners.
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
