import PerimeterGeometry

/// Checks on polygon rings that produce warnings, not errors: Perimeter still uses such rings
/// (even-odd rule), but the author probably did not mean them.
enum RingValidation {
    /// The first pair of non-adjacent edges of a closed ring that touch or cross, as edge numbers
    /// (edge *i* runs from position *i* to *i*+1), or `nil` when the ring is simple.
    ///
    /// - Complexity: a sweep over edges sorted by their west end: O(n log n + k) where k is the number of
    ///   edge pairs whose longitude ranges overlap (small for real rings).
    ///   Repeated consecutive positions are ignored (edge numbers then count distinct positions).
    static func firstSelfIntersection(_ positions: [Coordinate]) -> (Int, Int)? {
        var ring: [Coordinate] = []
        ring.reserveCapacity(positions.count)
        for c in positions where ring.last != c { ring.append(c) }
        let n = ring.count - 1  // edges
        guard n >= 3 else { return nil }
        let order = (0..<n).sorted {
            min(ring[$0].longitude, ring[$0 + 1].longitude) < min(ring[$1].longitude, ring[$1 + 1].longitude)
        }
        var best: (Int, Int)?
        for (k, i) in order.enumerated() {
            let maxX = max(ring[i].longitude, ring[i + 1].longitude)
            let minY = min(ring[i].latitude, ring[i + 1].latitude), maxY = max(ring[i].latitude, ring[i + 1].latitude)
            for j in order[(k + 1)...] {
                if min(ring[j].longitude, ring[j + 1].longitude) > maxX { break }
                // Boxes apart in latitude: neither touching nor overlapping (the common case).
                if min(ring[j].latitude, ring[j + 1].latitude) > maxY || max(ring[j].latitude, ring[j + 1].latitude) < minY {
                    continue
                }
                let (a, b) = (min(i, j), max(i, j))
                if b == a + 1 || (a == 0 && b == n - 1) {
                    // Adjacent edges share a vertex; they are wrong only if they overlap along a line.
                    if overlapsAlongLine(ring, a, b) { best = earlier(best, (a, b)) }
                    continue
                }
                if segmentsTouch(ring[a], ring[a + 1], ring[b], ring[b + 1]) { best = earlier(best, (a, b)) }
            }
        }
        return best
    }

    private static func earlier(_ current: (Int, Int)?, _ candidate: (Int, Int)) -> (Int, Int) {
        guard let current else { return candidate }
        return candidate < current ? candidate : current
    }

    /// Whether closed segments p1–p2 and q1–q2 share at least one point.
    static func segmentsTouch(_ p1: Coordinate, _ p2: Coordinate, _ q1: Coordinate, _ q2: Coordinate) -> Bool {
        let o1 = Planar.orientation(p1, p2, q1), o2 = Planar.orientation(p1, p2, q2)
        let o3 = Planar.orientation(q1, q2, p1), o4 = Planar.orientation(q1, q2, p2)
        if o1 * o2 < 0 && o3 * o4 < 0 { return true }
        return (o1 == 0 && Planar.isOnSegment(q1, p1, p2)) || (o2 == 0 && Planar.isOnSegment(q2, p1, p2))
            || (o3 == 0 && Planar.isOnSegment(p1, q1, q2)) || (o4 == 0 && Planar.isOnSegment(p2, q1, q2))
    }

    /// Whether two edges that share a vertex fold back over each other.
    private static func overlapsAlongLine(_ ring: [Coordinate], _ a: Int, _ b: Int) -> Bool {
        let (p1, p2, q1, q2) = (ring[a], ring[a + 1], ring[b], ring[b + 1])
        let shared: Coordinate, farP: Coordinate, farQ: Coordinate
        if p2 == q1 { (shared, farP, farQ) = (p2, p1, q2) } else { (shared, farP, farQ) = (p1, p2, q1) }
        // One orientation decides collinearity (the shared vertex is on both lines); testing it
        // against the shared vertex itself would always reach the exact fallback (a zero determinant).
        guard Planar.orientation(shared, farP, farQ) == 0 else { return false }
        // Collinear and sharing a vertex: they overlap when the far ends lie on the same side.
        let dp = (farP.longitude - shared.longitude, farP.latitude - shared.latitude)
        let dq = (farQ.longitude - shared.longitude, farQ.latitude - shared.latitude)
        return dp.0 * dq.0 + dp.1 * dq.1 > 0
    }
}
