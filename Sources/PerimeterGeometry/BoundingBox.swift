/// An axis-aligned rectangle in the longitude/latitude plane, edges included.
///
/// A box never wraps: one that would cross the antimeridian is represented by two boxes
/// (see ``Region/boundingBoxes``).
public struct BoundingBox: Hashable, Sendable {
    public var minLongitude: Double
    public var minLatitude: Double
    public var maxLongitude: Double
    public var maxLatitude: Double

    @inlinable
    public init(minLongitude: Double, minLatitude: Double, maxLongitude: Double, maxLatitude: Double) {
        self.minLongitude = minLongitude
        self.minLatitude = minLatitude
        self.maxLongitude = maxLongitude
        self.maxLatitude = maxLatitude
    }

    /// The smallest box holding every coordinate, or `nil` for an empty sequence.
    public init?<S: Sequence>(covering coordinates: S) where S.Element == Coordinate {
        var iterator = coordinates.makeIterator()
        guard let first = iterator.next() else { return nil }
        var box = BoundingBox(minLongitude: first.longitude, minLatitude: first.latitude,
                              maxLongitude: first.longitude, maxLatitude: first.latitude)
        while let c = iterator.next() { box.formUnion(c) }
        self = box
    }

    /// Whether `c` lies in the box or on its edge.
    @inlinable
    public func contains(_ c: Coordinate) -> Bool {
        c.longitude >= minLongitude && c.longitude <= maxLongitude
            && c.latitude >= minLatitude && c.latitude <= maxLatitude
    }

    /// Whether the two boxes share at least one point.
    @inlinable
    public func intersects(_ other: BoundingBox) -> Bool {
        minLongitude <= other.maxLongitude && other.minLongitude <= maxLongitude
            && minLatitude <= other.maxLatitude && other.minLatitude <= maxLatitude
    }

    /// Grows the box to hold `c`.
    @inlinable
    public mutating func formUnion(_ c: Coordinate) {
        minLongitude = Swift.min(minLongitude, c.longitude)
        maxLongitude = Swift.max(maxLongitude, c.longitude)
        minLatitude = Swift.min(minLatitude, c.latitude)
        maxLatitude = Swift.max(maxLatitude, c.latitude)
    }

    /// Grows the box to hold `other`.
    @inlinable
    public mutating func formUnion(_ other: BoundingBox) {
        minLongitude = Swift.min(minLongitude, other.minLongitude)
        maxLongitude = Swift.max(maxLongitude, other.maxLongitude)
        minLatitude = Swift.min(minLatitude, other.minLatitude)
        maxLatitude = Swift.max(maxLatitude, other.maxLatitude)
    }

    /// The box's width in degrees of longitude.
    @inlinable public var width: Double { maxLongitude - minLongitude }
    /// The box's height in degrees of latitude.
    @inlinable public var height: Double { maxLatitude - minLatitude }
}
