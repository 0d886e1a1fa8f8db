/// The flat grid of square cells (in degrees) that ``RegionIndex`` hangs its entries on.
///
/// Cell `(column, row)` covers `[originX + column·side, originX + (column+1)·side]` ×
/// `[originY + row·side, originY + (row+1)·side]`. Every coordinate the index derives from a cell
/// (its corners, its centre) comes from the functions here, so build and query see bit-identical
/// values.
struct GridLayout: Sendable {
    /// Longitude of the west edge of column 0.
    var originX: Double
    /// Latitude of the south edge of row 0.
    var originY: Double
    /// Side of a cell in degrees.
    var side: Double
    /// `1 / side`.
    var inverseSide: Double
    /// Number of columns.
    var columns: Int
    /// Number of rows.
    var rows: Int

    /// Margin, in degrees, by which a cell is widened when edges are assigned to it. It dwarfs the
    /// rounding error of the cell lookup (≈1e-13°), so every point the lookup maps to a cell lies
    /// inside the widened cell.
    static let margin = 1e-9

    /// A grid without cells (for an index with nothing to rasterize).
    static let empty = GridLayout(originX: 0, originY: 0, side: 1, inverseSide: 1, columns: 0, rows: 0)

    /// Number of cells.
    var cellCount: Int { columns * rows }

    /// West edge of a column.
    @inline(__always) func minX(_ column: Int) -> Double { originX + Double(column) * side }
    /// South edge of a row.
    @inline(__always) func minY(_ row: Int) -> Double { originY + Double(row) * side }
    /// Longitude of a column's centre line.
    @inline(__always) func centerX(_ column: Int) -> Double { originX + (Double(column) + 0.5) * side }
    /// Latitude of a row's centre line.
    @inline(__always) func centerY(_ row: Int) -> Double { originY + (Double(row) + 0.5) * side }
    /// Longitude of the centre line of a column's east half (`east` 1) or west half (0): a quarter of
    /// the side from the column's centre line. Build and query both compute it here, bit for bit (the
    /// half as a number, so that the query selects it without a branch).
    @inline(__always) func quadrantCenterX(_ column: Int, east: Int) -> Double {
        originX + (Double(column) + (0.25 + 0.5 * Double(east))) * side
    }
    /// Latitude of the centre line of a row's north half (`north` 1) or south half (0).
    @inline(__always) func quadrantCenterY(_ row: Int, north: Int) -> Double {
        originY + (Double(row) + (0.25 + 0.5 * Double(north))) * side
    }

    /// The cell a point falls in, or `nil` outside the grid (or for NaN).
    @inline(__always)
    func cell(x: Double, y: Double) -> (column: Int, row: Int)? {
        let fx = (x - originX) * inverseSide
        let fy = (y - originY) * inverseSide
        guard fx >= 0, fy >= 0, fx < Double(columns), fy < Double(rows) else { return nil }
        return (Int(fx), Int(fy))
    }

    /// The column (or row) of a point whose grid coordinate `(x − originX) · inverseSide` (or the same in
    /// y) is `v`, for `0 ≤ v < columns` (or rows): ⌊v⌋, or, when `v` is a whole number k ≥ 1, k − 1 or
    /// k. Either cell holds the point (it lies on their common side), which is all the query's exactness
    /// argument asks of the lookup (docs/fence-index.md). Computed without the range checks of `Int(_:)`:
    /// `v − 1/2` (exact for v ≥ 1/2) plus 1.5 · 2⁵² lies in [2⁵², 2⁵³), where doubles are the whole numbers,
    /// so the sum is `v − 1/2` rounded to the nearest one (ties to even), and its bit pattern minus that
    /// of 1.5 · 2⁵² is that number; valid for v < 2⁵¹.
    @inline(__always)
    static func cellIndex(_ v: Double) -> Int {
        Int(truncatingIfNeeded: ((v - 0.5) + 0x1.8p52).bitPattern &- (0x1.8p52 as Double).bitPattern)
    }

    /// Columns whose cells meet the closed longitude interval `lo…hi`, clamped to the grid.
    func columns(from lo: Double, to hi: Double) -> ClosedRange<Int>? {
        clampedRange((lo - originX) * inverseSide, (hi - originX) * inverseSide, columns)
    }

    /// Rows whose cells meet the closed latitude interval `lo…hi`, clamped to the grid.
    func rows(from lo: Double, to hi: Double) -> ClosedRange<Int>? {
        clampedRange((lo - originY) * inverseSide, (hi - originY) * inverseSide, rows)
    }

    private func clampedRange(_ lo: Double, _ hi: Double, _ count: Int) -> ClosedRange<Int>? {
        guard lo <= hi, hi >= 0, lo < Double(count), count > 0 else { return nil }
        let first = lo <= 0 ? 0 : Int(lo)
        let last = hi >= Double(count - 1) ? count - 1 : Int(hi)
        return first...last
    }
}
