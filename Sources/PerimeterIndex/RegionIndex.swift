import PerimeterGeometry

/// Answers "which regions contain this point?" exactly as `Region.contains` would, without testing
/// regions far from the point and without walking big polygons edge by edge.
///
/// A flat grid of square cells covers the regions. Each cell lists, per region that meets it, either
/// "the whole cell is inside", or the region's parity at a reference point of the cell plus the few
/// polygon edges that meet the cell (a query counts exact crossings between the reference point and
/// itself), or "ask `Region.contains`" (circles, corridors and buffers near their rim). See
/// docs/fence-index.md for the design and the exactness argument.
///
/// Region numbers are positions in the array given to ``init(regions:)``.
public struct RegionIndex: Sendable {
    /// The indexed regions, for the exact fallbacks.
    let regions: [Region]
    /// The grid geometry.
    let grid: GridLayout
    /// `cellStart[c] ..< cellStart[c + 1]` are cell `c`'s records (row-major cell numbers).
    let cellStart: [UInt32]
    /// The cells' entries, grouped by cell, ascending region number within a cell: each entry a header
    /// record (``CellRecord/header(region:flags:count:bound:)``), for a parity entry followed by its
    /// reference point and its edges as chains of vertices (``CellRecord``).
    let records: [CellRecord]
    /// Regions tested with `Region.contains` on every query (malformed input the grid cannot
    /// reason about), ascending.
    let alwaysTested: [Int32]
    /// Regions that may contain points on the ±180° meridian, ascending.
    let seamCandidates: [Int32]

    /// The number of indexed regions.
    public var count: Int { regions.count }

    /// The numbers of all regions containing `point`, ascending. Allocates the result; see
    /// ``regions(containing:into:)`` for the allocation-free form.
    /// - Complexity: as ``regions(containing:into:)``.
    public func regions(containing point: Coordinate) -> [Int32] {
        var result: [Int32] = []
        regions(containing: point, into: &result)
        return result
    }

    /// Clears `result`, then appends the numbers of all regions containing `point`, ascending.
    ///
    /// Same answer as `regions.indices.filter { regions[$0].contains(point) }` for every point,
    /// boundaries included. A NaN coordinate yields nothing. Points off the valid range (latitude
    /// beyond ±90, longitude beyond ±180) are rare malformed input and are answered by testing
    /// every region; points on the ±180° meridian test only the regions that reach it.
    /// - Complexity: O(k + e) for k regions meeting the point's cell and e edges of those regions
    ///   inside the cell, independent of the number of regions elsewhere; no allocation when
    ///   `result` has enough capacity.
    public func regions(containing point: Coordinate, into result: inout [Int32]) {
        if !result.isEmpty { result.removeAll(keepingCapacity: true) }
        let x = point.longitude, y = point.latitude
        let fx = (x - grid.originX) * grid.inverseSide, fy = (y - grid.originY) * grid.inverseSide
        // The common case in one run of comparisons, each false for NaN: inside the grid and inside the
        // valid range.
        guard fx >= 0, fy >= 0, fx < Double(grid.columns), fy < Double(grid.rows),
              x > -180, x < 180, y >= -90, y <= 90 else {
            return regionsOffGrid(point, &result)
        }
        scanCell(column: GridLayout.cellIndex(fx), row: GridLayout.cellIndex(fy), point, &result)
        if !alwaysTested.isEmpty { mergeAlwaysTested(point, &result) }
    }

    /// ``regions(containing:into:)`` for a point outside the grid or outside the valid range (NaN
    /// included), `result` already empty.
    @inline(never)
    private func regionsOffGrid(_ point: Coordinate, _ result: inout [Int32]) {
        let x = point.longitude, y = point.latitude
        if x.isNaN || y.isNaN { return }
        guard x > -180, x < 180, y >= -90, y <= 90 else {
            if (x == 180 || x == -180) && y >= -90 && y <= 90 {
                appendExact(seamCandidates, point, &result)
            } else {
                for r in regions.indices where regions[r].contains(point) { result.append(Int32(r)) }
                return
            }
            if !alwaysTested.isEmpty { mergeAlwaysTested(point, &result) }
            return
        }
        // Inside the valid range but outside the grid: no cell, only the always-tested regions.
        if !alwaysTested.isEmpty { mergeAlwaysTested(point, &result) }
    }

    /// Appends, ascending, the candidates that contain the point.
    private func appendExact(_ candidates: [Int32], _ point: Coordinate, _ result: inout [Int32]) {
        for r in candidates where regions[Int(r)].contains(point) { result.append(r) }
    }

    /// Adds the always-tested regions that contain the point, keeping `result` ascending and free
    /// of duplicates.
    private func mergeAlwaysTested(_ point: Coordinate, _ result: inout [Int32]) {
        guard !alwaysTested.isEmpty else { return }
        for r in alwaysTested where regions[Int(r)].contains(point) {
            // Insertion into a short sorted array: no allocation within capacity.
            var i = result.count
            while i > 0 && result[i - 1] > r { i -= 1 }
            if i > 0 && result[i - 1] == r { continue }
            result.insert(r, at: i)
        }
    }

    /// Evaluates the entries of one cell (inlined: the query makes no call on its common path).
    @inline(__always)
    private func scanCell(column: Int, row: Int, _ point: Coordinate, _ result: inout [Int32]) {
        // In range: the caller's cell is in the grid, and `cellStart` has one slot more than cells.
        let cell = row &* grid.columns &+ column
        let (first, end) = cellStart.withUnsafeBufferPointer { (Int($0[cell]), Int($0[cell &+ 1])) }
        guard first < end else { return }
        let qx = point.longitude, qy = point.latitude
        // The reference point of the entries that store none.
        let centerX = grid.centerX(column), centerY = grid.centerY(row)
        // The point's quadrant bit in a header's bit pattern: an entry without it set has no edge to
        // read here (no edges at all, or none near the segment from the centre to the point). Both
        // comparisons at once (one mask, no branch); a point on a centre line takes the east or north
        // half, which holds the segment's box as the other would.
        let westOrSouth = SIMD2(qx, qy) .< SIMD2(centerX, centerY)
        let quadrant = (westOrSouth[0] ? 0 : 1) | (westOrSouth[1] ? 0 : 2)
        let quadrantBit = UInt64(1) &<< (CellRecord.quadrantShift &+ UInt64(truncatingIfNeeded: quadrant))
        // The factors of the entries' bounds for c and q against an edge's line
        // (``IndexBuilder/edgeLineBound(_:)``).
        let reachPerBound = grid.inverseSide * IndexBuilder.reachPerBoundSide, twoSides = 2 * grid.side
        records.withUnsafeBufferPointer { records in
            var i = first
            var header = records[i]
            while true {
                // The entries of one region (a multipolygon's parts, wrapped copies, buffer zones) are
                // consecutive: the region is in when any of them says so.
                let region = header.region
                var hit = false
                // The union of the entries' header bits, for the exact flag: an OR, not a branch.
                var metaUnion: UInt64 = 0
                repeat {
                    let meta = header.y.bitPattern
                    let bodyStart = i &+ 1
                    i = bodyStart &+ header.count
                    metaUnion |= meta
                    if !hit {
                        hit = meta & quadrantBit == 0
                            ? header.flags & CellEntry.insideFlag != 0
                            : Self.parity(header, records, bodyStart, i, qx, qy, centerX, centerY,
                                          reachPerBound, twoSides)
                    }
                    if i >= end { break }
                    header = records[i]
                } while header.region == region
                if hit || (metaUnion & CellRecord.exactBit != 0 && regions[Int(region)].contains(point)) {
                    result.append(region)
                }
                if i >= end { return }
            }
        }
    }
}
