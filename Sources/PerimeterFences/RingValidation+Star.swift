import PerimeterGeometry

extension RingValidation {
    /// Whether the ring is proven simple by being star-shaped: a point `c` is found from which every edge
    /// turns the same way (every orientation (c, vᵢ, vᵢ₊₁) strictly positive, or every one strictly
    /// negative) and the ring goes around `c` exactly once. `false` means only "not proven".
    ///
    /// Why that proves it: seen from `c`, each edge then sweeps an angle strictly between 0 and π, the
    /// angles add up to one full turn, so the edges' closed angular sectors meet only along the ray
    /// through their shared vertex, and no edge passes through `c`. Two edges that are not adjacent lie
    /// in sectors that share no ray: they cannot meet. Two adjacent edges meet the ray between them only at
    /// their shared vertex: they cannot overlap. Every test is exact (``Planar/orientation(_:_:_:)`` and
    /// comparisons of coordinates), whatever point `c` is; how `c` is found only decides how often the
    /// proof succeeds.
    ///
    /// The point tried first is the mean of the vertices: inside every convex ring and most smooth ones.
    /// Then a point of the ring's kernel (the region that sees the whole ring, the intersection of the
    /// edges' inner half-planes) found by linear programming: for rough star-shaped rings, such as
    /// gen_workload.py's large fences, the kernel is a few ten-thousandths of the ring's width across, far
    /// from the mean of the vertices.
    /// - Parameter ring: closed (the last position equals the first; an open ring is never proven),
    ///   without repeated consecutive positions; `edges` = `ring.count - 1`.
    /// - Complexity: O(n), no sorting: two passes of n orientation tests, and for the kernel point four
    ///   small linear programs (Seidel's randomized algorithm; its work is capped at ``kernelWorkPerEdge``
    ///   steps per edge, beyond which the ring is left to the sweeps).
    static func isSimpleAsStar(_ ring: UnsafeBufferPointer<Coordinate>, edges n: Int) -> Bool {
        guard n >= 3, ring.count == n + 1, ring[n] == ring[0] else { return false }
        var sumX = 0.0, sumY = 0.0
        for i in 0..<n {
            sumX += ring[i].longitude
            sumY += ring[i].latitude
        }
        let mean = Coordinate(latitude: sumY / Double(n), longitude: sumX / Double(n))
        guard mean.latitude.isFinite, mean.longitude.isFinite else { return false }
        if goesAroundOnce(ring, edges: n, seenFrom: mean) { return true }
        guard let centre = kernelPoint(ring, edges: n, origin: mean) else { return false }
        return goesAroundOnce(ring, edges: n, seenFrom: centre)
    }

    /// Whether every edge of the closed ring turns strictly the same way seen from `c`, and the ring
    /// goes around `c` exactly once (exact; see ``isSimpleAsStar(_:edges:)``).
    ///
    /// The turns are counted by where the ring crosses the ray from `c` towards east: each vertex lies in
    /// the upper half-turn [0, π) (north of `c`, or due east of it) or the lower one [π, 2π), which
    /// comparisons of coordinates tell exactly. Edges that each turn by less than π in one direction go
    /// past the ray exactly when they pass from the lower half-turn to the upper one (counterclockwise)
    /// or from the upper to the lower (clockwise).
    static func goesAroundOnce(_ ring: UnsafeBufferPointer<Coordinate>, edges n: Int, seenFrom c: Coordinate) -> Bool {
        @inline(__always) func isUpper(_ v: Coordinate) -> Bool {
            v.latitude > c.latitude || (v.latitude == c.latitude && v.longitude > c.longitude)
        }
        let turn = Planar.orientation(c, ring[0], ring[1])
        guard turn != 0 else { return false }
        var crossings = 0
        var upper = isUpper(ring[0])
        for i in 0..<n {
            let next = ring[i + 1]
            if i > 0, Planar.orientation(c, ring[i], next) != turn { return false }
            let nextUpper = isUpper(next)
            if upper != nextUpper, nextUpper == (turn > 0) { crossings += 1 }
            upper = nextUpper
        }
        return crossings == 1
    }

    /// The most steps (constraints tested again on a new line) the kernel search may take per edge before
    /// it gives up. It takes about two per edge and objective on gen_workload.py's rings (at most four); the
    /// cap keeps a ring built to defeat the fixed random order from costing O(n²).
    static let kernelWorkPerEdge = 24

    /// A point well inside the ring's kernel, in floating point (the caller checks it exactly), or `nil`
    /// when the search finds the kernel empty, or gives up.
    ///
    /// The kernel lies in the inner half-plane of every edge (left of it for a counterclockwise ring), and
    /// within the ring's bounding box. Four linear programs over those half-planes find its easternmost,
    /// westernmost, northernmost and southernmost points (Seidel's algorithm: the half-planes in a random
    /// order; when the best point so far falls outside the next one, the new best lies on that one's line,
    /// found from the half-planes before it); their mean lies inside unless the kernel is flat. Computed
    /// relative to `origin` (near the ring), where the coordinates' rounding errors are smallest.
    static func kernelPoint(_ ring: UnsafeBufferPointer<Coordinate>, edges n: Int, origin: Coordinate) -> Coordinate? {
        // Each edge's inner half-plane as a·p ≥ b, with p relative to `origin`; the side from the ring's
        // signed area (a wrong side only makes the kernel empty).
        var area = 0.0
        var planes: [HalfPlane] = []
        planes.reserveCapacity(n)
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for i in 0..<n {
            let px = ring[i].longitude - origin.longitude, py = ring[i].latitude - origin.latitude
            let qx = ring[i + 1].longitude - origin.longitude, qy = ring[i + 1].latitude - origin.latitude
            area += px * qy - qx * py
            minX = min(minX, px); maxX = max(maxX, px); minY = min(minY, py); maxY = max(maxY, py)
            let ax = py - qy, ay = qx - px  // the edge turned a quarter counterclockwise: its left side
            planes.append(HalfPlane(ax: ax, ay: ay, b: ax * px + ay * py))
        }
        guard area.isFinite, area != 0 else { return nil }
        if area < 0 {
            for k in planes.indices {
                planes[k].ax = -planes[k].ax
                planes[k].ay = -planes[k].ay
                planes[k].b = -planes[k].b
            }
        }
        let box = [HalfPlane(ax: 1, ay: 0, b: minX), HalfPlane(ax: -1, ay: 0, b: -maxX),
                   HalfPlane(ax: 0, ay: 1, b: minY), HalfPlane(ax: 0, ay: -1, b: -maxY)]
        // A fixed seed: the same ring always takes the same steps.
        var order = [Int32](unsafeUninitializedCapacity: n) { buffer, count in
            for k in 0..<n { buffer[k] = Int32(k) }
            count = n
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &+ UInt64(n)
        order.withUnsafeMutableBufferPointer { order in
            for k in stride(from: n - 1, to: 0, by: -1) {
                // SplitMix64.
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                order.swapAt(k, Int(z % UInt64(k + 1)))
            }
        }
        var budget = kernelWorkPerEdge * n
        var sumX = 0.0, sumY = 0.0
        let objectives: [(Double, Double)] = [(1, 0), (-1, 0), (0, 1), (0, -1)]
        let found = planes.withUnsafeBufferPointer { planes in
            order.withUnsafeBufferPointer { order in
                for (dx, dy) in objectives {
                    guard let (x, y) = maximize(dx, dy, planes, order, box: box, corner: (dx < 0 ? minX : maxX, dy < 0 ? minY : maxY),
                                                budget: &budget)
                    else { return false }
                    sumX += x
                    sumY += y
                }
                return true
            }
        }
        guard found else { return nil }
        let centre = Coordinate(latitude: origin.latitude + sumY / 4, longitude: origin.longitude + sumX / 4)
        return centre.latitude.isFinite && centre.longitude.isFinite ? centre : nil
    }

    /// An inner half-plane a·p ≥ b.
    struct HalfPlane {
        var ax, ay, b: Double
    }

    /// A point of the half-planes' intersection that maximizes d·p (Seidel's incremental algorithm, in
    /// `order`), starting from the box's `corner`; `nil` when the intersection is found empty or `budget`
    /// runs out.
    private static func maximize(_ dx: Double, _ dy: Double, _ planes: UnsafeBufferPointer<HalfPlane>,
                                 _ order: UnsafeBufferPointer<Int32>, box: [HalfPlane], corner: (Double, Double),
                                 budget: inout Int) -> (Double, Double)? {
        var (x, y) = corner
        for k in 0..<order.count {
            let h = planes[Int(order[k])]
            if h.ax * x + h.ay * y >= h.b { continue }
            // The best point now lies on h's line: p(t) = p0 + t·u, u along the line.
            let norm = h.ax * h.ax + h.ay * h.ay
            guard norm > 0, norm.isFinite else { return nil }
            let x0 = h.ax * h.b / norm, y0 = h.ay * h.b / norm
            let ux = -h.ay, uy = h.ax
            var lo = -Double.infinity, hi = Double.infinity
            for g in box { limit(g, x0, y0, ux, uy, &lo, &hi) }
            budget -= k
            guard budget >= 0 else { return nil }
            for j in 0..<k { limit(planes[Int(order[j])], x0, y0, ux, uy, &lo, &hi) }
            guard lo <= hi, lo.isFinite, hi.isFinite else { return nil }
            let slope = dx * ux + dy * uy
            let t = slope > 0 ? hi : slope < 0 ? lo : (lo + hi) / 2
            x = x0 + t * ux
            y = y0 + t * uy
        }
        return (x, y)
    }

    /// Narrows [`lo`, `hi`] to the t for which p0 + t·u lies in `g`: g·p(t) ≥ g.b ⇔ t·(g·u) ≥ g.b − g·p0.
    @inline(__always)
    private static func limit(_ g: HalfPlane, _ x0: Double, _ y0: Double, _ ux: Double, _ uy: Double,
                              _ lo: inout Double, _ hi: inout Double) {
        let s = g.ax * ux + g.ay * uy
        let r = g.b - (g.ax * x0 + g.ay * y0)
        if s > 0 { lo = max(lo, r / s) } else if s < 0 { hi = min(hi, r / s) } else if r > 0 { lo = .infinity }
    }
}
