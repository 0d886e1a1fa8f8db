import PerimeterGeometry
import Testing
import PerimeterTestSupport
@testable import PerimeterIndex

/// The query's cell lookup (`GridLayout.cellIndex`, without the checks of `Int(_:)`): the cell it picks
/// holds the point, also on grid lines, where it may pick either of two cells.
@Suite struct CellLookupTests {
    /// ⌊v⌋, or for a whole number k ≥ 1 possibly k − 1; never anything else, over the whole range a
    /// grid can have.
    @Test func cellIndexIsTheFloorOrTheCellBelowAWholeNumber() {
        var rng = SplitMix64(seed: 41)
        var values: [Double] = [0, 0.5.nextDown, 0.5, 0.5.nextUp, 1.0.nextDown, 1, 1.5, 2, 2.5, 3, 4095.5, 4096,
                                Double(1 << 23).nextDown, Double(1 << 23)]
        for k in 0..<2000 { values.append(Double(k)); values.append(Double(k) + 0.5); values.append(Double(k).nextUp) }
        for _ in 0..<20_000 { values.append(Double.random(in: 0 ..< 9_000_000, using: &rng)) }
        for _ in 0..<20_000 { values.append(Double.random(in: 0 ..< 3, using: &rng)) }
        var wrong = 0
        for v in values {
            let floor = Int(v.rounded(.down))
            let index = GridLayout.cellIndex(v)
            let allowed = index == floor || (v == v.rounded(.down) && floor >= 1 && index == floor - 1)
            if !allowed {
                wrong += 1
                if wrong <= 5 { Issue.record("cellIndex(\(v)) = \(index), ⌊v⌋ = \(floor)") }
            }
        }
        #expect(wrong == 0)
        // Whole numbers do take the cell below sometimes (ties to even), so both branches above are used.
        #expect(GridLayout.cellIndex(1) == 0 && GridLayout.cellIndex(2) == 2)
    }

    /// Points on grid lines, on cell corners and a ulp either side of them: the cell the query's lookup
    /// picks holds the point (within the assignment margin), and the answers equal brute force.
    @Test(arguments: [51 as UInt64, 52])
    func gridLinePointsMatchBruteForce(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let regions = TestShapes.mixedRegions(count: 50, using: &rng)
        let index = RegionIndex(regions: regions)
        let grid = index.grid
        #expect(grid.cellCount > 0)
        var points: [Coordinate] = []
        for _ in 0..<400 {
            let column = Int.random(in: 0..<grid.columns, using: &rng), row = Int.random(in: 0..<grid.rows, using: &rng)
            let x = grid.minX(column), y = grid.minY(row)
            for px in [x.nextDown, x, x.nextUp] {
                for py in [y.nextDown, y, y.nextUp, grid.centerY(row)] {
                    points.append(Coordinate(latitude: py, longitude: px))
                }
            }
            points.append(Coordinate(latitude: grid.centerY(row), longitude: grid.centerX(column)))
        }
        var outside = 0
        for p in points {
            let fx = (p.longitude - grid.originX) * grid.inverseSide, fy = (p.latitude - grid.originY) * grid.inverseSide
            guard fx >= 0, fy >= 0, fx < Double(grid.columns), fy < Double(grid.rows) else { continue }
            let column = GridLayout.cellIndex(fx), row = GridLayout.cellIndex(fy)
            let holds = p.longitude >= grid.minX(column) - GridLayout.margin
                && p.longitude <= grid.minX(column + 1) + GridLayout.margin
                && p.latitude >= grid.minY(row) - GridLayout.margin && p.latitude <= grid.minY(row + 1) + GridLayout.margin
            if !holds {
                outside += 1
                if outside <= 5 { Issue.record("\(p) looked up in cell (\(column), \(row))") }
            }
        }
        #expect(outside == 0)
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }
}
