// PLACEHOLDER (to be replaced by the geometry work): naive predicates so dependants compile.

/// Exact predicates in the longitude/latitude plane (x = longitude, y = latitude).
public enum Planar {
    /// The sign of the turn a → b → c: `+1` counter-clockwise (c left of a→b), `-1` clockwise, `0` collinear.
    public static func orientation(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate) -> Int {
        let d = (b.longitude - a.longitude) * (c.latitude - a.latitude) - (b.latitude - a.latitude) * (c.longitude - a.longitude)
        return d > 0 ? 1 : (d < 0 ? -1 : 0)
    }

    /// Whether `p` lies on the closed segment a–b.
    public static func isOnSegment(_ p: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Bool {
        orientation(a, b, p) == 0
            && p.longitude >= min(a.longitude, b.longitude) && p.longitude <= max(a.longitude, b.longitude)
            && p.latitude >= min(a.latitude, b.latitude) && p.latitude <= max(a.latitude, b.latitude)
    }
}
