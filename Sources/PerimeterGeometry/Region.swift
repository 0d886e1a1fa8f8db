/// The area a fence covers: what ``contains(_:)`` answers for.
///
/// A region is one of three shapes plus an optional buffer in metres. With a buffer, a point is inside
/// when it is inside the shape or within `buffer` metres (geodesic, WGS84) of the shape's boundary.
public struct Region: Hashable, Sendable {
    /// The geometric kind of a region.
    public enum Shape: Hashable, Sendable {
        /// One or more polygons in the lon/lat plane. A point is inside when it is inside any of them
        /// (union across polygons, even-odd within each polygon's rings).
        case polygons([Polygon])
        /// All points within `radius` metres (geodesic) of `center`.
        case circle(center: Coordinate, radius: Double)
        /// All points within `radius` metres of a chain of lon/lat segments (a route, a trail).
        case corridor(lines: [[Coordinate]], radius: Double)
    }

    /// The shape before buffering.
    public var shape: Shape
    /// Extra distance in metres around the shape's boundary that also counts as inside; `0` for none.
    public var buffer: Double

    /// Creates a region from a shape and an optional buffer in metres.
    public init(_ shape: Shape, buffer: Double = 0) {
        self.shape = shape
        self.buffer = buffer
    }
}
