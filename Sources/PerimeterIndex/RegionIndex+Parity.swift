import PerimeterGeometry

extension RegionIndex {
    /// Whether the point is inside the polygon of the entry whose header is `header` and whose records
    /// (the stored reference point if any, else the reference is the centre `centerX`, `centerY` of the
    /// point's quadrant, whose parity is the header's `parityBit`; then chains of vertices) are
    /// `records[start ..< end]`: the answer of ``exactParity(_:_:_:_:_:_:_:_:_:)``, computed without calls.
    ///
    /// Per edge, the box test (is the edge strictly beside the box of the segment c–q?) runs on both
    /// coordinates at once: the edge's box from a lane-wise maximum and minimum, its two gaps to the box
    /// of c–q, one minimum over the lanes, one branch. An edge it keeps (about one in three here) has all
    /// four orientations of the crossing rule read from plain determinants compared with static bounds:
    /// its ends against the line c–q with the entry's bound (``IndexBuilder/orientationBound(side:reach:)``),
    /// c and q against the edge's line with ``IndexBuilder/edgeLineBound(_:)``. When all four signs are
    /// certain, the crossing rule needs nothing else (q is not on the edge, which would make o(a, b, q)
    /// zero, and neither end is on the line c–q), and the parity toggles without a branch on the
    /// signs. When one is not, an edge with both ends certainly on one side of the line c–q is done;
    /// otherwise the entry goes to ``exactParity(_:_:_:_:_:_:_:_:_:)``, which decides everything with the
    /// exact predicates: the answer never depends on a guess.
    /// `reachPerBound` and `twoSides` are the grid's factors of ``IndexBuilder/edgeLineBound(_:)``.
    @inline(__always)
    static func parity(_ header: CellRecord, _ records: UnsafeBufferPointer<CellRecord>, _ start: Int, _ end: Int,
                       _ qx: Double, _ qy: Double, _ centerX: Double, _ centerY: Double, _ parityBit: UInt64,
                       _ reachPerBound: Double, _ twoSides: Double) -> Bool {
        let bound = header.bound
        let lineBound = IndexBuilder.edgeLineBound(bound * reachPerBound + twoSides)
        var (cx, cy, first, inside) = reference(header, records, start, centerX, centerY, parityBit)
        let dqx = qx - cx, dqy = qy - cy
        let lower = SIMD2(Swift.min(cx, qx), Swift.min(cy, qy))
        let upper = SIMD2(Swift.max(cx, qx), Swift.max(cy, qy))
        var a = SIMD2(records[first].x, records[first].y)
        var k = first + 1
        while k < end {
            let b = SIMD2(records[k].x, records[k].y)
            k += 1
            // The edge's box, both coordinates at once (lane-wise maximum and minimum), and per coordinate
            // the smaller of its two gaps to the box of c–q: how far its upper end reaches past the lower
            // side, and the box's upper side past the edge's lower end. A negative gap in one lane puts the
            // edge strictly beside the box (the sign of a difference of finite values is exact). The
            // selections propagate a NaN of `a` (the first record after a chain break), so that one of
            // the two pseudo-edges at a break is always beside the box (`!(gap >= 0)` holds for NaN); the
            // other passes when its finite end lies in the box, and the NaN check below drops it.
            let high = a.replacing(with: b, where: b .> a)
            let low = a.replacing(with: b, where: b .< a)
            let gapLow = high - lower, gapHigh = upper - low
            let gap = gapLow.replacing(with: gapHigh, where: gapHigh .< gapLow)
            let ax = a.x, ay = a.y, bx = b.x, by = b.y
            a = b
            if !(Swift.min(gap.x, gap.y) >= 0) { continue }
            if ax.isNaN || bx.isNaN { continue }
            let d1 = dqx * (ay - cy) - dqy * (ax - cx)
            let d2 = dqx * (by - cy) - dqy * (bx - cx)
            // o(a, b, c) and o(a, b, q) as `Planar.certainDeterminant` computes them, without its filter.
            let d3 = (ax - cx) * (by - cy) - (ay - cy) * (bx - cx)
            let d4 = (ax - qx) * (by - qy) - (ay - qy) * (bx - qx)
            guard Swift.abs(d1) > bound, Swift.abs(d2) > bound, Swift.abs(d3) > lineBound, Swift.abs(d4) > lineBound else {
                // Both strictly on one side of the line c–q: neither crossed nor touching q.
                if (d1 > bound && d2 > bound) || (d1 < -bound && d2 < -bound) { continue }
                return exactParity(header, records, start, end, qx, qy, centerX, centerY, parityBit)
            }
            // Certain signs: the edge crosses the segment exactly when a and b lie on opposite sides of the
            // line c–q and c and q on opposite sides of the edge's line (a coin toss for the edges that
            // get here, so combined without a branch).
            inside = inside != (((d1 > 0) != (d2 > 0)) && ((d3 > 0) != (d4 > 0)))
        }
        return inside
    }

    /// Whether the point is inside the polygon of the entry whose header is `header` and whose records
    /// (the stored reference point if any, else the reference is the centre `centerX`, `centerY` of the
    /// point's quadrant, whose parity is the header's `parityBit`; then chains of vertices) are
    /// `records[start ..< end]`: on one of its edges, or an odd number of exact crossings away from the
    /// reference point's parity.
    ///
    /// The crossing rule treats vertices on the line through the reference point and the query as
    /// lying on its right (a consistent symbolic shift of that line), so every crossing is counted
    /// once; see docs/fence-index.md. The orientation of each edge end against that line is first read
    /// from one unfiltered determinant compared with the entry's static bound
    /// (``IndexBuilder/orientationBound(side:reach:)``); only a determinant within the bound asks the
    /// exact predicate, so every sign is exact.
    ///
    /// ``parity(_:_:_:_:_:_:_:_:_:_:_:)`` hands an entry here when a determinant it needs is too close to zero
    /// for its sign to be certain (or the point lies on an edge).
    @inline(never)
    static func exactParity(_ header: CellRecord, _ records: UnsafeBufferPointer<CellRecord>, _ start: Int, _ end: Int,
                       _ qx: Double, _ qy: Double, _ centerX: Double, _ centerY: Double, _ parityBit: UInt64) -> Bool {
        let bound = header.bound
        var (cx, cy, first, inside) = reference(header, records, start, centerX, centerY, parityBit)
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

    /// The entry's reference point c (its stored one when flagged, else the centre of the point's quadrant
    /// of the cell), the index of its first vertex record, and c's parity (the header's `parityBit`):
    /// where both parity loops start.
    @inline(__always)
    static func reference(_ header: CellRecord, _ records: UnsafeBufferPointer<CellRecord>, _ start: Int,
                          _ centerX: Double, _ centerY: Double, _ parityBit: UInt64)
        -> (x: Double, y: Double, first: Int, inside: Bool) {
        // Written as the loops had it inline (assignments under one condition, not two returns): the
        // returns made the compiler branch differently, +0.8 % instructions a query.
        let flags = header.flags
        var reference = (x: centerX, y: centerY, first: start, inside: false)
        if flags & CellEntry.shiftedReferenceFlag != 0 {
            reference.x = records[start].x
            reference.y = records[start].y
            reference.first += 1
        }
        // The quadrant's parity; an entry with a stored reference point has its parity in all four bits.
        reference.inside = header.x.bitPattern & parityBit != 0
        return reference
    }
}
