/// A polygon in the longitude/latitude plane: an exterior ring followed by zero or more holes.
///
/// Every ring is closed (its first and last coordinates are equal) and has at least four coordinates.
/// Membership uses the even-odd rule over all rings, so a hole is outside, and a point on any ring's
/// boundary is inside (see docs/geometry.md).
public struct Polygon: Hashable, Sendable {
    /// `rings[0]` is the exterior; the rest are holes. Each ring is closed.
    public var rings: [[Coordinate]] {
        didSet { boundingBox = Polygon.box(of: rings) }
    }

    /// The smallest box holding every coordinate of every ring, kept in step with ``rings``.
    ///
    /// Longitudes are as given (a polygon written with 170…190 has a box reaching 190). For a
    /// polygon without coordinates the box is empty (minimum above maximum), so it contains nothing.
    public private(set) var boundingBox: BoundingBox

    /// Creates a polygon from closed rings, exterior first.
    /// - Complexity: O(n) in the number of coordinates (the bounding box is computed once).
    public init(rings: [[Coordinate]]) {
        self.rings = rings
        self.boundingBox = Polygon.box(of: rings)
    }

    static func box(of rings: [[Coordinate]]) -> BoundingBox {
        var box = BoundingBox(minLongitude: .infinity, minLatitude: .infinity,
                              maxLongitude: -.infinity, maxLatitude: -.infinity)
        for ring in rings {
            for c in ring { box.formUnion(c) }
        }
        return box
    }
}
