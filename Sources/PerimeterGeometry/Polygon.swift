/// A polygon in the longitude/latitude plane: an exterior ring followed by zero or more holes.
///
/// Every ring is closed (its first and last coordinates are equal) and has at least four coordinates.
/// Membership uses the even-odd rule over all rings, so a hole is outside, and a point on any ring's
/// boundary is inside (see docs/geometry.md).
public struct Polygon: Hashable, Sendable {
    /// `rings[0]` is the exterior; the rest are holes. Each ring is closed.
    public var rings: [[Coordinate]]

    /// Creates a polygon from closed rings, exterior first.
    public init(rings: [[Coordinate]]) {
        self.rings = rings
    }
}
