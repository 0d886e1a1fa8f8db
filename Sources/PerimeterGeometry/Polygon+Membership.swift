extension Polygon {
    /// Whether `c` is inside the polygon, its boundary included.
    ///
    /// Even-odd over all rings (holes are outside; self-intersecting rings follow even-odd too); a
    /// point exactly on any ring's edge or vertex is inside. Longitudes are compared modulo 360°:
    /// the point is also tried at `longitude ± 360` when the polygon's box reaches past ±180, so a
    /// polygon written with 170…190 holds a point given at −175, and −180 and 180 name the same
    /// meridian. Exact: crossings use ``Planar/orientation(_:_:_:)``.
    /// - Complexity: O(n) in the number of coordinates; O(1) when the box rejects; no allocation.
    @inlinable
    public func contains(_ c: Coordinate) -> Bool {
        let box = boundingBox
        guard c.latitude >= box.minLatitude, c.latitude <= box.maxLatitude else { return false }
        if c.longitude >= box.minLongitude, c.longitude <= box.maxLongitude, containsUnwrapped(c) { return true }
        let east = Coordinate(latitude: c.latitude, longitude: c.longitude + 360)
        if east.longitude >= box.minLongitude, east.longitude <= box.maxLongitude, containsUnwrapped(east) {
            return true
        }
        let west = Coordinate(latitude: c.latitude, longitude: c.longitude - 360)
        if west.longitude >= box.minLongitude, west.longitude <= box.maxLongitude, containsUnwrapped(west) {
            return true
        }
        return false
    }

    /// Even-odd membership of `p` with longitudes taken literally (no ±360 retries).
    ///
    /// Crossing number along the ray to +x with the half-open rule (an edge counts when exactly one
    /// endpoint lies strictly above the ray), decided by exact orientation; boundary points are
    /// detected exactly and reported as inside. Unclosed rings are closed implicitly.
    /// - Complexity: O(n); no allocation.
    @inlinable
    func containsUnwrapped(_ p: Coordinate) -> Bool {
        var inside = false
        let px = p.longitude, py = p.latitude
        for ring in rings {
            guard var a = ring.last else { continue }
            for b in ring {
                defer { a = b }
                let aAbove = a.latitude > py, bAbove = b.latitude > py
                if aAbove != bAbove {
                    // The edge straddles the ray's line; where does it cross relative to p?
                    if a.longitude < px && b.longitude < px { continue }
                    if a.longitude > px && b.longitude > px { inside.toggle(); continue }
                    let o = Planar.orientation(a, b, p)
                    if o == 0 { return true }
                    // Upward edge (b above): crossing right of p iff p is left of a→b.
                    if (o > 0) == bAbove { inside.toggle() }
                } else if !aAbove && (a.latitude == py || b.latitude == py) {
                    // Touches the ray's line without straddling it: only a boundary check.
                    if Planar.isOnSegment(p, a, b) { return true }
                }
            }
        }
        return inside
    }
}
