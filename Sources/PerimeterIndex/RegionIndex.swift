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

    /// The most region numbers a query of a point inside the grid and the valid range can find: the
    /// most region runs in one cell plus the always-tested regions. A ``RegionBuffer`` gets this much
    /// room once, so that the query appends without checks.
    let answerCapacity: Int
    /// The grid's columns and rows as doubles: a point's grid coordinates are below them inside the grid.
    let gridExtent: SIMD2<Double>
    /// Longitude and latitude are above these inside the valid range: −180 (the ±180° meridian is
    /// answered apart) and the double below −90 (latitude −90 is valid). Literals, so that the query
    /// reads constants (a stored `static let` of a computed value costs a `swift_once` call per query).
    @inline(__always) static var validRangeLow: SIMD2<Double> { SIMD2(-180, -0x1.6800000000001p6) }
    /// Longitude and latitude are below these inside the valid range: 180 and the double above 90.
    @inline(__always) static var validRangeHigh: SIMD2<Double> { SIMD2(180, 0x1.6800000000001p6) }

    /// The numbers of all regions containing `point`, ascending. Allocates the result; see
    /// ``regions(containing:into:)`` for the allocation-free forms.
    /// - Complexity: as ``regions(containing:into:)``.
    public func regions(containing point: Coordinate) -> [Int32] {
        var result: [Int32] = []
        regions(containing: point, into: &result)
        return result
    }

    /// Makes `result` hold the numbers of all regions containing `point`, ascending.
    ///
    /// Same answer as `regions.indices.filter { regions[$0].contains(point) }` for every point,
    /// boundaries included. A NaN coordinate yields nothing. Points off the valid range (latitude
    /// beyond ±90, longitude beyond ±180) are rare malformed input and are answered by testing
    /// every region; points on the ±180° meridian test only the regions that reach it.
    ///
    /// The query for repeated use: the buffer is cleared by setting its count, and gets room for
    /// ``answerCapacity`` numbers before the scan (once, as a rule), so each region found is a store.
    /// - Complexity: O(k + e) for k regions meeting the point's cell and e edges of those regions
    ///   inside the cell, independent of the number of regions elsewhere; no allocation once `result`
    ///   has room for this index's answers and is not shared with a copy.
    public func regions(containing point: Coordinate, into result: inout RegionBuffer) {
        let base = result.startAnswer(atMost: answerCapacity)
        if let count = answer(point, base) {
            result.setCount(count)
        } else {
            result.replace(with: regionsOffGrid(point))
        }
    }

    /// Clears `result`, then appends the numbers of all regions containing `point`, ascending: the answer
    /// of ``regions(containing:into:)`` with a ``RegionBuffer``, for callers that keep an array.
    /// - Complexity: as the ``RegionBuffer`` form, plus the copy of the answer; no allocation when
    ///   `result` has enough capacity and the index's ``answerCapacity`` fits on the stack.
    public func regions(containing point: Coordinate, into result: inout [Int32]) {
        if !result.isEmpty { result.removeAll(keepingCapacity: true) }
        let found = withUnsafeTemporaryAllocation(of: Int32.self, capacity: Swift.max(answerCapacity, 1)) { buffer in
            answer(point, buffer.baseAddress!).map { result.append(contentsOf: buffer[..<$0]) }
        }
        if found == nil { result = regionsOffGrid(point) }
    }

    /// Writes at `base` the numbers of all regions containing `point`, ascending, and returns how many,
    /// for a point inside the grid and the valid range or inside the valid range and off the grid:
    /// at most ``answerCapacity``. `nil` for any other point (NaN, off the valid range, the ±180°
    /// meridian), which ``regionsOffGrid(_:)`` answers.
    @inline(__always)
    private func answer(_ point: Coordinate, _ base: UnsafeMutablePointer<Int32>) -> Int? {
        let p = SIMD2(point.longitude, point.latitude)
        let f = (p - SIMD2(grid.originX, grid.originY)) * grid.inverseSide
        // The common case, both coordinates at once and one branch: inside the grid (0 ≤ f < the grid's
        // columns and rows) and inside the valid range (−180 < x < 180, −90 ≤ y ≤ 90, the latter written
        // strictly against the doubles beyond ±90). Every comparison is false for NaN.
        let inValidRange = (p .> Self.validRangeLow) .& (p .< Self.validRangeHigh)
        guard all((f .>= 0) .& (f .< gridExtent) .& inValidRange) else {
            // Inside the valid range but outside the grid: no cell, only the always-tested regions.
            guard all(inValidRange) else { return nil }
            return alwaysTested.isEmpty ? 0 : mergeAlwaysTested(point, base, 0)
        }
        let count = scanCell(column: GridLayout.cellIndex(f.x), row: GridLayout.cellIndex(f.y), point, base)
        return alwaysTested.isEmpty ? count : mergeAlwaysTested(point, base, count)
    }

    /// The answer for a point off the valid range, on the ±180° meridian, or NaN (rare malformed or
    /// edge input; allocates).
    @inline(never)
    private func regionsOffGrid(_ point: Coordinate) -> [Int32] {
        let x = point.longitude, y = point.latitude
        if x.isNaN || y.isNaN || regions.isEmpty { return [] }
        // The seam candidates and the always-tested regions are regions, and the merge adds no
        // duplicate: at most every region.
        return Array(unsafeUninitializedCapacity: regions.count) { buffer, written in
            let base = buffer.baseAddress!
            var n = 0
            if (x == 180 || x == -180) && y >= -90 && y <= 90 {
                for r in seamCandidates where regions[Int(r)].contains(point) { base[n] = r; n += 1 }
                written = alwaysTested.isEmpty ? n : mergeAlwaysTested(point, base, n)
            } else {
                for r in regions.indices where regions[r].contains(point) { base[n] = Int32(r); n += 1 }
                written = n
            }
        }
    }

    /// Adds the always-tested regions that contain the point to the `count` ascending numbers at `base`,
    /// keeping them ascending and free of duplicates; returns the new count. `base` has room for
    /// `count` plus the always-tested regions.
    @inline(never)
    private func mergeAlwaysTested(_ point: Coordinate, _ base: UnsafeMutablePointer<Int32>, _ count: Int) -> Int {
        var n = count
        for r in alwaysTested where regions[Int(r)].contains(point) {
            // Insertion into a short sorted list.
            var i = n
            while i > 0 && base[i - 1] > r { i -= 1 }
            if i > 0 && base[i - 1] == r { continue }
            var j = n
            while j > i { base[j] = base[j - 1]; j -= 1 }
            base[i] = r
            n += 1
        }
        return n
    }

    /// The most region runs (consecutive entries of one region) in any cell, plus the always-tested
    /// regions: ``answerCapacity``. The scan appends at most once per run, the merge at most once per
    /// always-tested region.
    static func answerCapacity(cellStart: [UInt32], records: [CellRecord], alwaysTested: Int) -> Int {
        var most = 0
        for cell in 0 ..< Swift.max(cellStart.count - 1, 0) {
            var i = Int(cellStart[cell])
            let end = Int(cellStart[cell + 1])
            var runs = 0
            var previous = Int32(-1)  // region numbers are positions: never negative
            while i < end {
                let header = records[i]
                if header.region != previous { runs += 1; previous = header.region }
                i += 1 + header.count
            }
            most = Swift.max(most, runs)
        }
        return most + alwaysTested
    }

    /// Writes at `result` the regions of one cell's entries that contain the point, ascending, and returns
    /// how many (inlined: the query makes no call on its common path).
    @inline(__always)
    private func scanCell(column: Int, row: Int, _ point: Coordinate, _ result: UnsafeMutablePointer<Int32>) -> Int {
        // In range: the caller's cell is in the grid, and `cellStart` has one slot more than cells.
        let cell = row &* grid.columns &+ column
        let (first, end) = cellStart.withUnsafeBufferPointer { (Int($0[cell]), Int($0[cell &+ 1])) }
        guard first < end else { return 0 }
        let qx = point.longitude, qy = point.latitude
        // The point's quadrant (east by qx ≥ the cell's centre, north by qy ≥ it), whose centre is the
        // reference point of the entries that store none, and its sub-cell of that quadrant (by q ≥ the
        // quadrant's centre): comparisons and arithmetic, no branch (the quadrant's centre takes its half
        // as the number 0 or 1). A point on a line takes the east or north side, whose sub-cell holds the
        // segment from that side's centre to it as the other would (``CellRecord/subCellCount``).
        let east = qx >= grid.centerX(column) ? 1 : 0, north = qy >= grid.centerY(row) ? 1 : 0
        let centerX = grid.quadrantCenterX(column, east: east), centerY = grid.quadrantCenterY(row, north: north)
        let beyond = SIMD2(qx, qy) .>= SIMD2(centerX, centerY)
        let quadrant = east | north << 1
        let subCell = east << 1 | (beyond[0] ? 1 : 0) | north << 3 | (beyond[1] ? 4 : 0)
        // An entry's bit of the sub-cell in its box mask, and of the quadrant in its parities.
        let subCellBit = UInt64(1) &<< UInt64(truncatingIfNeeded: subCell)
        let parityBit = UInt64(1) &<< (CellRecord.quadrantParityShift &+ UInt64(truncatingIfNeeded: quadrant))
        // The factors of the entries' bounds for c and q against an edge's line
        // (``IndexBuilder/edgeLineBound(_:)``).
        let reachPerBound = grid.inverseSide * IndexBuilder.reachPerBoundSide, twoSides = 2 * grid.side
        return records.withUnsafeBufferPointer { records in
            var i = first
            var count = 0
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
                        hit = header.x.bitPattern & subCellBit == 0
                            ? header.x.bitPattern & parityBit != 0
                            : Self.parity(header, records, bodyStart, i, qx, qy, centerX, centerY, parityBit,
                                          reachPerBound, twoSides)
                    }
                    if i >= end { break }
                    header = records[i]
                } while header.region == region
                if hit || (metaUnion & CellRecord.exactBit != 0 && regions[Int(region)].contains(point)) {
                    result[count] = region
                    count &+= 1
                }
                if i >= end { return count }
            }
        }
    }
}
