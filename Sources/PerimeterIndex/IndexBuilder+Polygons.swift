import PerimeterGeometry

/// Polygon rasterization: edges to cells, then one exact parity walk along each grid row.
extension IndexBuilder {
    /// Adds one polygon's entries: a parity entry for every cell an edge meets, a full entry for
    /// every edge-free cell inside. Returns `false` if no reference point could be found in some
    /// cell or a row's parity did not return to "outside" (caller falls back to exact tests).
    mutating func addPolygon(_ polygon: Polygon, region: Int32) -> Bool {
        collectEdges(of: polygon)
        pairs.removeAll(keepingCapacity: true)
        for index in polygonEdges.indices { rasterizeEdge(index) }
        sortPairsByCell()
        var i = 0
        while i < pairs.count {
            let row = Self.cell(of: pairs[i]) / grid.columns
            // The walk starts at the centre of the cell left of the row's first boundary cell,
            // which no edge meets, so it is outside.
            var previous: (column: Int, reference: (x: Double, y: Double), inside: Bool, range: Range<Int>)?
            while i < pairs.count, Self.cell(of: pairs[i]) / grid.columns == row {
                let cell = Self.cell(of: pairs[i])
                var j = i + 1
                while j < pairs.count, Self.cell(of: pairs[j]) == cell { j += 1 }
                let column = cell - row * grid.columns
                let range = i..<j
                guard 3 * range.count <= CellEntry.maximumRecordCount,
                      let reference = referencePoint(column: column, row: row, range) else { return false }
                var inside: Bool
                if let p = previous, p.column == column - 1 {
                    inside = p.inside != crossesOddly(from: p.reference, to: reference, p.range, range)
                } else {
                    var gapInside = false
                    if let p = previous {
                        let next = (x: grid.centerX(p.column + 1), y: grid.centerY(row))
                        gapInside = p.inside != crossesOddly(from: p.reference, to: next, p.range, 0..<0)
                        if gapInside {
                            for c in (p.column + 1)..<column { emitFull(cell: row * grid.columns + c, region: region) }
                        }
                    }
                    let before = (x: grid.centerX(column - 1), y: grid.centerY(row))
                    inside = gapInside != crossesOddly(from: before, to: reference, range, 0..<0)
                }
                emitBoundary(cell: cell, region: region, inside: inside, reference: reference, range)
                previous = (column, reference, inside, range)
                i = j
            }
            // Past the last boundary cell the row must be outside again (closed rings).
            if let p = previous {
                let next = (x: grid.centerX(p.column + 1), y: grid.centerY(row))
                if p.inside != crossesOddly(from: p.reference, to: next, p.range, 0..<0) { return false }
            }
        }
        return true
    }

    /// Fills `polygonEdges` with the polygon's edges, rings closed implicitly as `Polygon.contains`
    /// does (the closing edge of an already closed ring has zero length and is skipped).
    mutating func collectEdges(of polygon: Polygon) {
        polygonEdges.removeAll(keepingCapacity: true)
        for ring in polygon.rings {
            guard var a = ring.last else { continue }
            for (k, b) in ring.enumerated() {
                defer { a = b }
                if k == 0 && ring.count > 1 && a == b { continue }
                polygonEdges.append(PolygonEdge(ax: a.longitude, ay: a.latitude, bx: b.longitude, by: b.latitude))
            }
        }
    }

    /// Appends a (cell, edge) pair for every cell whose widened rectangle the edge may meet.
    mutating func rasterizeEdge(_ index: Int) {
        let e = polygonEdges[index]
        let m = 2 * GridLayout.margin
        guard let rows = grid.rows(from: min(e.ay, e.by) - m, to: max(e.ay, e.by) + m),
              let allColumns = grid.columns(from: min(e.ax, e.bx) - m, to: max(e.ax, e.bx) + m) else { return }
        let dx = e.bx - e.ax, dy = e.by - e.ay
        let tag = UInt64(index)
        if rows.count == 1 || allColumns.count == 1 || abs(dx) > 1000 * abs(dy) {
            for row in rows {
                for column in allColumns { pairs.append(UInt64(row * grid.columns + column) << 32 | tag) }
            }
            return
        }
        for row in rows {
            // The part of the edge within the row's band (widened), then its columns.
            let tA = (grid.minY(row) - m - e.ay) / dy, tB = (grid.minY(row + 1) + m - e.ay) / dy
            var t0 = max(0, min(tA, tB)), t1 = min(1, max(tA, tB))
            if t0 > t1 { swap(&t0, &t1) }
            let xa = e.ax + t0 * dx, xb = e.ax + t1 * dx
            guard let columns = grid.columns(from: min(xa, xb) - m, to: max(xa, xb) + m) else { continue }
            for column in columns { pairs.append(UInt64(row * grid.columns + column) << 32 | tag) }
        }
    }

    /// Sorts `pairs` into the order `pairs.sort()` gives — by cell, then by edge — with a stable radix
    /// sort on the cell alone: ``rasterizeEdge(_:)`` appends pairs in ascending edge order, so a stable
    /// sort by cell leaves each cell's edges ascending. A comparison sort of these keys was about a
    /// tenth of an import's CPU time (perf); short lists still use it.
    mutating func sortPairsByCell() {
        let n = pairs.count
        guard n >= Self.radixSortMinimum else { pairs.sort(); return }
        var lo = UInt64.max, hi: UInt64 = 0
        for p in pairs {
            lo = min(lo, p >> 32)
            hi = max(hi, p >> 32)
        }
        let range = hi - lo
        guard range > 0 else { return }  // one cell: already in edge order
        let bits = UInt64.bitWidth - range.leadingZeroBitCount
        let passes = (bits + Self.radixBits - 1) / Self.radixBits
        let digitMask = UInt64(1 << Self.radixBits - 1)
        if radixScratch.count < n { radixScratch = [UInt64](repeating: 0, count: n) }
        var counts = [Int](repeating: 0, count: 1 << Self.radixBits)
        for pass in 0..<passes {
            let shift = UInt64(pass * Self.radixBits)
            pairs.withUnsafeMutableBufferPointer { source in
                radixScratch.withUnsafeMutableBufferPointer { target in
                    counts.withUnsafeMutableBufferPointer { counts in
                        for d in counts.indices { counts[d] = 0 }
                        for p in source { counts[Int(((p >> 32) &- lo) >> shift & digitMask)] += 1 }
                        var total = 0
                        for d in counts.indices {
                            let c = counts[d]
                            counts[d] = total
                            total += c
                        }
                        for p in source {
                            let d = Int(((p >> 32) &- lo) >> shift & digitMask)
                            target[counts[d]] = p
                            counts[d] += 1
                        }
                    }
                }
            }
            // The sorted copy becomes `pairs`; the old one is the next pass's scratch.
            swap(&pairs, &radixScratch)
            if pairs.count > n { pairs.removeLast(pairs.count - n) }
        }
    }

    /// Lists shorter than this are sorted by comparison (a radix pass costs its 2^``radixBits`` counters).
    static let radixSortMinimum = 256
    /// Bits of the cell number sorted per radix pass.
    static let radixBits = 11

    @inline(__always) static func cell(of pair: UInt64) -> Int { Int(pair >> 32) }
    @inline(__always) static func edge(of pair: UInt64) -> Int { Int(pair & 0xffff_ffff) }

    /// A point of the cell on none of its edges: the centre if possible, else one of a few scattered
    /// points; `nil` if all of them lie on edges.
    func referencePoint(column: Int, row: Int, _ range: Range<Int>) -> (x: Double, y: Double)? {
        let center = (x: grid.centerX(column), y: grid.centerY(row))
        if !isOnEdge(center, range) { return center }
        for k in 1...24 {
            let fx = (0.5 + Double(k) * 0.6180339887498949).truncatingRemainder(dividingBy: 1)
            let fy = (0.5 + Double(k) * 0.7548776662466927).truncatingRemainder(dividingBy: 1)
            let p = (x: grid.minX(column) + fx * grid.side, y: grid.minY(row) + fy * grid.side)
            if !isOnEdge(p, range) { return p }
        }
        return nil
    }

    /// Whether the point lies on one of the edges of the pairs in `range`, exactly.
    func isOnEdge(_ p: (x: Double, y: Double), _ range: Range<Int>) -> Bool {
        let point = Coordinate(latitude: p.y, longitude: p.x)
        for k in range {
            let e = polygonEdges[Self.edge(of: pairs[k])]
            if Planar.isOnSegment(point, Coordinate(latitude: e.ay, longitude: e.ax),
                                  Coordinate(latitude: e.by, longitude: e.bx)) { return true }
        }
        return false
    }

    /// Whether the segment p→q (both off the boundary) crosses the edges of the pairs in `first`
    /// and `second` (each edge counted once) an odd number of times, with the same symbolic rule
    /// as the query.
    func crossesOddly(from p: (x: Double, y: Double), to q: (x: Double, y: Double),
                      _ first: Range<Int>, _ second: Range<Int>) -> Bool {
        let pc = Coordinate(latitude: p.y, longitude: p.x), qc = Coordinate(latitude: q.y, longitude: q.x)
        var odd = false
        var i = first.lowerBound, j = second.lowerBound
        // Merge the two edge-sorted lists, skipping duplicates.
        while i < first.upperBound || j < second.upperBound {
            let ei = i < first.upperBound ? Self.edge(of: pairs[i]) : Int.max
            let ej = j < second.upperBound ? Self.edge(of: pairs[j]) : Int.max
            let edge = min(ei, ej)
            if ei == edge { i += 1 }
            if ej == edge { j += 1 }
            let e = polygonEdges[edge]
            let a = Coordinate(latitude: e.ay, longitude: e.ax), b = Coordinate(latitude: e.by, longitude: e.bx)
            if Self.crosses(pc, qc, a, b) { odd.toggle() }
        }
        return odd
    }

    /// Whether the segment p→q (both off the edge) crosses the edge a→b under the query's symbolic rule:
    /// a and b on opposite sides of the line p–q, an end on the line counted on the side of
    /// non-positive orientation, and p and q strictly on opposite sides of the edge's line. Exact.
    @inline(__always)
    static func crosses(_ p: Coordinate, _ q: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Bool {
        let o1 = Planar.orientation(p, q, a), o2 = Planar.orientation(p, q, b)
        guard (o1 > 0) != (o2 > 0) else { return false }
        let o3 = Planar.orientation(a, b, p), o4 = Planar.orientation(a, b, q)
        return (o3 > 0 && o4 < 0) || (o3 < 0 && o4 > 0)
    }

    /// The polygon's parity at the centre of each quadrant of the cell (bit k for quadrant k, see
    /// ``CellRecord/quadrantParityShift``), from `reference`'s (`inside`) and the exact crossings of the
    /// segment from it to each centre with the edges of the pairs in `range`; `nil` when a centre lies on
    /// one of those edges. Both points lie in the cell, so these are all the edges the segment can meet.
    ///
    /// The answer of ``isOnEdge(_:_:)`` and ``crossesOddly(from:to:_:_:)`` for the four centres, in one
    /// pass over the edges, each skipped for a centre when its box lies strictly beside the box of that
    /// centre's segment (it can then neither hold the centre nor cross the segment, as in the query's box
    /// test), so that the exact predicates run for the few edges near a segment only.
    func quadrantParities(from reference: (x: Double, y: Double), inside: Bool, westX: Double, eastX: Double,
                          southY: Double, northY: Double, _ range: Range<Int>) -> UInt32? {
        polygonEdges.withUnsafeBufferPointer { edges in
            pairs.withUnsafeBufferPointer { pairs in
                Self.quadrantParities(from: reference, inside: inside, westX: westX, eastX: eastX, southY: southY,
                                      northY: northY, edges, pairs[range])
            }
        }
    }

    /// ``quadrantParities(from:inside:westX:eastX:southY:northY:_:)`` on the builder's edges and pairs in
    /// place (a method of the builder called from a mutating one may copy the builder).
    static func quadrantParities(from reference: (x: Double, y: Double), inside: Bool, westX: Double, eastX: Double,
                                 southY: Double, northY: Double, _ edges: UnsafeBufferPointer<PolygonEdge>,
                                 _ pairs: Slice<UnsafeBufferPointer<UInt64>>) -> UInt32? {
        let p = Coordinate(latitude: reference.y, longitude: reference.x)
        // The four centres (quadrant k: east when bit 0 of k is set, north when bit 1 is) and the boxes
        // of their segments from the reference point, lane k for quadrant k.
        let centersX = SIMD4(westX, eastX, westX, eastX), centersY = SIMD4(southY, southY, northY, northY)
        let referenceX = SIMD4(repeating: reference.x), referenceY = SIMD4(repeating: reference.y)
        let lowX = centersX.replacing(with: referenceX, where: referenceX .< centersX)
        let highX = centersX.replacing(with: referenceX, where: referenceX .> centersX)
        let lowY = centersY.replacing(with: referenceY, where: referenceY .< centersY)
        let highY = centersY.replacing(with: referenceY, where: referenceY .> centersY)
        var odd: UInt32 = 0
        for pair in pairs {
            let e = edges[edge(of: pair)]
            let minX = min(e.ax, e.bx), maxX = max(e.ax, e.bx), minY = min(e.ay, e.by), maxY = max(e.ay, e.by)
            // The segments whose box the edge's box meets (closed boxes): the others are beside it.
            let near = (SIMD4(repeating: maxX) .>= lowX) .& (SIMD4(repeating: minX) .<= highX)
                .& (SIMD4(repeating: maxY) .>= lowY) .& (SIMD4(repeating: minY) .<= highY)
            guard any(near) else { continue }
            let a = Coordinate(latitude: e.ay, longitude: e.ax), b = Coordinate(latitude: e.by, longitude: e.bx)
            for quadrant in 0 ..< 4 where near[quadrant] {
                let c = Coordinate(latitude: centersY[quadrant], longitude: centersX[quadrant])
                if Planar.isOnSegment(c, a, b) { return nil }
                if crosses(p, c, a, b) { odd ^= 1 << quadrant }
            }
        }
        return inside ? ~odd & 0b1111 : odd
    }

    /// Records a parity entry: a header (the polygon's parity at the centres of the cell's quadrants, the
    /// box mask, the orientation bound), then the cell's edges as chains of vertices (``CellRecord``).
    /// The query computes the quadrants' centres as ``GridLayout/quadrantCenterX(_:east:)`` does here, bit
    /// for bit. When one of them lies on an edge, the entry stores `reference` (the cell's centre or
    /// another point of the cell off every edge, whose parity is `inside`) after the header instead
    /// (``CellEntry/shiftedReferenceFlag``), and the query starts there. The pairs in `range` are in
    /// ascending edge order, so the edges that follow one another along a ring are adjacent: an edge whose
    /// start is (bit for bit) the previous edge's end continues the chain with its end alone.
    mutating func emitBoundary(cell: Int, region: Int32, inside: Bool, reference: (x: Double, y: Double),
                               _ range: Range<Int>) {
        let column = cell % grid.columns, row = cell / grid.columns
        let westX = grid.quadrantCenterX(column, east: 0), eastX = grid.quadrantCenterX(column, east: 1)
        let southY = grid.quadrantCenterY(row, north: 0), northY = grid.quadrantCenterY(row, north: 1)
        // The quadrant centres' parities, or, when a centre lies on an edge, `reference` stored and its
        // parity in all four bits.
        let computed = quadrantParities(from: reference, inside: inside, westX: westX, eastX: eastX,
                                        southY: southY, northY: northY, range)
        let stored = computed == nil
        let parities = computed ?? (inside ? 0b1111 : 0)
        let start = records.count
        var flags: UInt32 = inside ? CellEntry.insideFlag : 0
        if stored { flags |= CellEntry.shiftedReferenceFlag }
        records.append(.header(region: region, flags: flags, count: 0, bound: 0))  // completed below
        if stored { records.append(CellRecord(x: reference.x, y: reference.y)) }
        var reach = 0.0
        var lastX = Double.nan, lastY = Double.nan
        let boxes = SubCellBoxes(grid, column: column, row: row)
        var boxMask = stored ? CellRecord.allSubCells : 0
        for k in range {
            let e = polygonEdges[Self.edge(of: pairs[k])]
            // The reach from every reference point the query may start at: the stored one, or each
            // quadrant's centre.
            if stored {
                reach = max(reach, abs(e.ax - reference.x), abs(e.ay - reference.y),
                            abs(e.bx - reference.x), abs(e.by - reference.y))
            } else {
                boxMask |= boxes.mask(e)
                reach = max(reach, abs(e.ax - westX), abs(e.ax - eastX), abs(e.bx - westX), abs(e.bx - eastX),
                            abs(e.ay - southY), abs(e.ay - northY), abs(e.by - southY), abs(e.by - northY))
            }
            if e.ax.bitPattern != lastX.bitPattern || e.ay.bitPattern != lastY.bitPattern {
                if k != range.lowerBound { records.append(.chainBreak) }
                records.append(CellRecord(x: e.ax, y: e.ay))
            }
            records.append(CellRecord(x: e.bx, y: e.by))
            lastX = e.bx
            lastY = e.by
        }
        records[start] = .header(region: region, flags: flags, boxMask: boxMask, quadrantParities: parities,
                                 count: records.count - start - 1,
                                 bound: Self.orientationBound(side: grid.side, reach: reach))
        emit(cell: cell, CellEntry(region: region, flags: flags, recordStart: UInt32(start),
                                   recordCount: UInt32(records.count - start)))
    }

    /// A bound B such that, for every point q of a cell of this `side` and every edge endpoint a no
    /// farther than `reach` from the entry's reference point c in either coordinate, the determinant
    /// d = (qx − cx)·(ay − cy) − (qy − cy)·(ax − cx) as computed in `Double` has the sign of the exact
    /// orientation of (c, q, a) whenever |d| > B; `.infinity` when no such bound is safe (huge values).
    ///
    /// d is Shewchuk's orient2d(q, a, c), whose sign is settled by |d| > (3 + 16ε)ε·(|dl| + |dr|) for the
    /// computed products dl and dr (the filter `Planar.orientation` applies per call). Here |qx − cx| and
    /// |qy − cy| are at most one side (q and c lie in the same cell; twice the side covers the lookup's
    /// rounding and the assignment margin), |a − c| at most `reach`, so |dl| + |dr| ≤ 2·2side·reach, up
    /// to the rounding of the differences and products (the factor 1.01); the tiny absolute term covers
    /// products that underflow, as in `Planar.orientation`. The query compares each edge's two
    /// determinants with B and asks the exact predicate only when |d| ≤ B: per edge the arithmetic of an
    /// unfiltered orientation, with the same answers.
    static func orientationBound(side: Double, reach: Double) -> Double {
        let sum = 2 * (2 * side) * reach * 1.01
        guard sum.isFinite, sum < 0x1p999 else { return .infinity }
        return 3.3306690738754716e-16 * sum * 1.01 + 0x1p-1060
    }

    /// The grid's factor from an entry's orientation bound B (``orientationBound(side:reach:)``) to an
    /// upper bound of its reach: B · `inverseSide` · this ≥ reach. B is 3.33·10⁻¹⁶ · 4side · reach · 1.01²
    /// plus a tiny term, each step rounded; the factor 1.001 covers the rounding of B, of `inverseSide`
    /// and of the product, and the tiny term only makes the result larger.
    static let reachPerBoundSide = 1.001 / (3.3306690738754716e-16 * 4 * 1.01 * 1.01)

    /// A bound L such that, for every point q of a cell of the grid and every edge a–b of an entry whose
    /// ends are no farther than `reachAndTwoSides` − 2·side from the entry's reference point c in either
    /// coordinate, the determinants (ax − px)·(by − py) − (ay − py)·(bx − px) for p = c and p = q, as
    /// computed in `Double`, have the sign of the exact orientation of (a, b, p) whenever |d| > L; `.infinity`
    /// when the values are too large for the bound to hold.
    ///
    /// This is the determinant `Planar.certainDeterminant` computes, whose sign is settled by
    /// |d| > (3 + 16ε)ε·(|dl| + |dr|). Every difference is at most the reach plus |q − c| ≤ 2·side (as in
    /// ``orientationBound(side:reach:)``), so |dl| + |dr| ≤ 2·(reach + 2side)², up to the rounding of the
    /// differences, the products and of L itself (the factor 1.01²); the tiny term covers products that
    /// underflow. The query computes L once per entry, from the entry's bound
    /// (`bound · inverseSide · reachPerBoundSide + 2·side`), instead of a filter per determinant.
    @inline(__always)
    static func edgeLineBound(_ reachAndTwoSides: Double) -> Double {
        let square = reachAndTwoSides * reachAndTwoSides
        return square < 0x1p990 ? 3.3306690738754716e-16 * 2 * 1.01 * 1.01 * square + 0x1p-1060 : .infinity
    }

    /// `Polygon.contains` also tries longitude ± 360 when a polygon's box reaches past ±180; the
    /// cells of those shifted boxes defer to the exact test.
    mutating func addWrappedCopies(_ polygons: [Polygon], region: Int32) {
        for polygon in polygons {
            let b = polygon.boundingBox
            guard b.minLongitude <= b.maxLongitude, b.minLongitude < -180 || b.maxLongitude > 180 else { continue }
            for shift in [-360.0, 360.0] where b.minLongitude + shift < 180 && b.maxLongitude + shift > -180 {
                let box = WrappedBox(minX: max(-180, b.minLongitude + shift), minY: b.minLatitude,
                                     maxX: min(180, b.maxLongitude + shift), maxY: b.maxLatitude, shift: -shift)
                forEachCellCollecting(in: box)
                emitCollectedExact(region: region)
            }
        }
    }

    /// Adds `cellKeys` entries for every cell of the box (state: exact).
    mutating func forEachCellCollecting(in box: WrappedBox) {
        var keys: [UInt64] = []
        swap(&keys, &cellKeys)
        keys.removeAll(keepingCapacity: true)
        forEachCell(in: box) { cell, _, _ in keys.append(UInt64(cell) << 1) }
        swap(&keys, &cellKeys)
    }
}

/// The sixteen sub-cells of one cell (see ``CellRecord/subCellCount``): the cell cut at its centre lines
/// and at its quadrants' centre lines, the outer sides pushed outward by twice ``GridLayout/margin``.
///
/// A query q of the cell lies in its sub-cell, and so does the segment from its quadrant's centre to q
/// (the sub-cell has that centre as a corner). An edge whose box misses the sub-cell lies strictly
/// beside the segment's box in x or in y: the box test of the parity loops would skip it. An entry
/// none of whose edges meets q's sub-cell therefore answers its quadrant's parity, which the query
/// reads without its edges. Comparisons only: exact for the doubles the sub-cells are made of, which
/// are the query's (the same functions of the grid).
struct SubCellBoxes {
    /// The sub-cells' sides from west to east, and from south to north.
    let xs: (Double, Double, Double, Double, Double)
    let ys: (Double, Double, Double, Double, Double)

    init(_ grid: GridLayout, column: Int, row: Int) {
        let pad = 2 * GridLayout.margin
        xs = (grid.minX(column) - pad, grid.quadrantCenterX(column, east: 0), grid.centerX(column),
              grid.quadrantCenterX(column, east: 1), grid.minX(column + 1) + pad)
        ys = (grid.minY(row) - pad, grid.quadrantCenterY(row, north: 0), grid.centerY(row),
              grid.quadrantCenterY(row, north: 1), grid.minY(row + 1) + pad)
    }

    /// The sub-cells whose closed rectangle the edge's box meets (bit i + 4j for sub-cell i + 4j): those
    /// of the columns i whose x-interval the edge's x-extent meets and of the rows j whose y-interval its
    /// y-extent meets.
    @inline(__always)
    func mask(_ e: PolygonEdge) -> UInt32 {
        let minX = min(e.ax, e.bx), maxX = max(e.ax, e.bx), minY = min(e.ay, e.by), maxY = max(e.ay, e.by)
        // Column i holds the bits 0x1111 << i, row j the bits 0xf << 4j.
        var columns: UInt32 = 0
        if minX <= xs.1 && maxX >= xs.0 { columns |= 0x1111 }
        if minX <= xs.2 && maxX >= xs.1 { columns |= 0x2222 }
        if minX <= xs.3 && maxX >= xs.2 { columns |= 0x4444 }
        if minX <= xs.4 && maxX >= xs.3 { columns |= 0x8888 }
        var rows: UInt32 = 0
        if minY <= ys.1 && maxY >= ys.0 { rows |= 0x000f }
        if minY <= ys.2 && maxY >= ys.1 { rows |= 0x00f0 }
        if minY <= ys.3 && maxY >= ys.2 { rows |= 0x0f00 }
        if minY <= ys.4 && maxY >= ys.3 { rows |= 0xf000 }
        return columns & rows
    }
}
