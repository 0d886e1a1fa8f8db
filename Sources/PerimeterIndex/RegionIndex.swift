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
        if let (column, row) = grid.cell(x: x, y: y) {
            scanCell(column: column, row: row, point, &result)
        }
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

    /// Evaluates the entries of one cell.
    private func scanCell(column: Int, row: Int, _ point: Coordinate, _ result: inout [Int32]) {
        let cell = row * grid.columns + column
        let first = Int(cellStart[cell]), end = Int(cellStart[cell + 1])
        guard first < end else { return }
        let qx = point.longitude, qy = point.latitude
        // The reference point of the entries that store none.
        let centerX = grid.centerX(column), centerY = grid.centerY(row)
        records.withUnsafeBufferPointer { records in
            var i = first
            var header = records[i]
            while true {
                // The entries of one region (a multipolygon's parts, wrapped copies, buffer zones) are
                // consecutive: the region is in when any of them says so.
                let region = header.region
                var hit = false
                var needsExact = false
                repeat {
                    let flags = header.flags
                    let bodyStart = i + 1
                    i = bodyStart + header.count
                    if !hit {
                        if flags & CellEntry.exactFlag != 0 { needsExact = true }
                        hit = bodyStart == i
                            ? flags & CellEntry.insideFlag != 0
                            : Self.parity(header, records, bodyStart, i, qx, qy, centerX, centerY)
                    }
                    if i >= end { break }
                    header = records[i]
                } while header.region == region
                if hit || (needsExact && regions[Int(region)].contains(point)) { result.append(region) }
                if i >= end { return }
            }
        }
    }

    /// Whether the point is inside the polygon of the entry whose header is `header` and whose records
    /// (reference point if not the cell's centre `centerX`, `centerY`, then chains of vertices) are
    /// `records[start ..< end]`: on one of its edges, or an odd number of exact crossings away from the
    /// reference point's parity.
    ///
    /// The crossing rule treats vertices on the line through the reference point and the query as
    /// lying on its right (a consistent symbolic shift of that line), so every crossing is counted
    /// once; see docs/fence-index.md. The orientation of each edge end against that line is first read
    /// from one unfiltered determinant compared with the entry's static bound
    /// (``IndexBuilder/orientationBound(side:reach:)``); only a determinant within the bound asks the
    /// exact predicate, so every sign is exact.
    @inline(__always)
    static func parity(_ header: CellRecord, _ records: UnsafeBufferPointer<CellRecord>, _ start: Int, _ end: Int,
                       _ qx: Double, _ qy: Double, _ centerX: Double, _ centerY: Double) -> Bool {
        let flags = header.flags, bound = header.bound
        var cx = centerX, cy = centerY
        var first = start
        if flags & CellEntry.shiftedReferenceFlag != 0 {
            cx = records[start].x
            cy = records[start].y
            first += 1
        }
        var inside = flags & CellEntry.insideFlag != 0
        let dqx = qx - cx, dqy = qy - cy
        // The box of the segment c–q. An edge whose box lies strictly beside it can neither cross the
        // segment (nor its infinitesimally shifted copy) nor hold q: a few comparisons reject most
        // edges of a cell before any orientation test.
        let minX = Swift.min(cx, qx), maxX = Swift.max(cx, qx)
        let minY = Swift.min(cy, qy), maxY = Swift.max(cy, qy)
        // Every two consecutive records are an edge a→b, the vertex b the next edge's a.
        var ax = records[first].x, ay = records[first].y
        var k = first + 1
        while k < end {
            let bx = records[k].x, by = records[k].y
            k += 1
            defer { ax = bx; ay = by }
            // Written as "some end on the box's side of each of its four lines", so that a NaN end
            // (a pseudo-edge touching a chain break: every comparison with NaN is false) counts as
            // beside the box: such an edge passes only when its other end lies in the box, and the
            // check after drops it.
            guard (ax >= minX || bx >= minX) && (ax <= maxX || bx <= maxX)
                && (ay >= minY || by >= minY) && (ay <= maxY || by <= maxY) else { continue }
            if ax.isNaN || bx.isNaN { continue }
            let d1 = dqx * (ay - cy) - dqy * (ax - cx)
            let d2 = dqx * (by - cy) - dqy * (bx - cx)
            // Both strictly on one side of the line c–q: neither crossed nor touching q.
            if (d1 > bound && d2 > bound) || (d1 < -bound && d2 < -bound) { continue }
            let c = Coordinate(latitude: cy, longitude: cx)
            let q = Coordinate(latitude: qy, longitude: qx)
            let a = Coordinate(latitude: ay, longitude: ax)
            let b = Coordinate(latitude: by, longitude: bx)
            let o1 = d1 > bound ? 1 : d1 < -bound ? -1 : Planar.orientation(c, q, a)
            let o2 = d2 > bound ? 1 : d2 < -bound ? -1 : Planar.orientation(c, q, b)
            if (o1 > 0 && o2 > 0) || (o1 < 0 && o2 < 0) { continue }
            let o4 = Planar.orientation(a, b, q)
            if o4 == 0 && qx >= Swift.min(ax, bx) && qx <= Swift.max(ax, bx)
                && qy >= Swift.min(ay, by) && qy <= Swift.max(ay, by) {
                return true  // on the boundary
            }
            if (o1 > 0) != (o2 > 0) {
                let o3 = Planar.orientation(a, b, c)
                if (o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0) { inside.toggle() }
            }
        }
        return inside
    }
}
