// The six RFC 7946 geometry types that carry coordinates. Their `Codable` conformances, which validate, are in
// GeoJSON+GeometryCodable.swift.

extension GeoJSON {
    /// A `Point`: one position.
    public struct Point: Hashable, Sendable {
        /// The position.
        public var coordinates: Position
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a point.
        public init(_ coordinates: Position, bbox: BoundingBox? = nil) {
            self.coordinates = coordinates
            self.bbox = bbox
        }
    }

    /// A `MultiPoint`: any number of positions.
    public struct MultiPoint: Hashable, Sendable {
        /// The positions.
        public var coordinates: [Position]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a multipoint.
        public init(_ coordinates: [Position], bbox: BoundingBox? = nil) {
            self.coordinates = coordinates
            self.bbox = bbox
        }
    }

    /// A `LineString`: two or more positions (or none, for an empty geometry).
    public struct LineString: Hashable, Sendable {
        /// The positions.
        public var coordinates: [Position]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a line string; ``GeoJSON/Validation`` checks it has at least two positions.
        public init(_ coordinates: [Position], bbox: BoundingBox? = nil) {
            self.coordinates = coordinates
            self.bbox = bbox
        }
    }

    /// A `MultiLineString`: line strings of two or more positions each.
    public struct MultiLineString: Hashable, Sendable {
        /// The line strings.
        public var coordinates: [[Position]]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a multi-line string.
        public init(_ coordinates: [[Position]], bbox: BoundingBox? = nil) {
            self.coordinates = coordinates
            self.bbox = bbox
        }
    }

    /// A `Polygon`: linear rings (closed, four or more positions), the first the exterior, the others holes.
    public struct Polygon: Hashable, Sendable {
        /// The rings: exterior first, then holes.
        public var coordinates: [[Position]]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a polygon.
        public init(_ coordinates: [[Position]], bbox: BoundingBox? = nil) {
            self.coordinates = coordinates
            self.bbox = bbox
        }
    }

    /// A `MultiPolygon`: polygons, each a list of rings.
    public struct MultiPolygon: Hashable, Sendable {
        /// The polygons.
        public var coordinates: [[[Position]]]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a multipolygon.
        public init(_ coordinates: [[[Position]]], bbox: BoundingBox? = nil) {
            self.coordinates = coordinates
            self.bbox = bbox
        }
    }
}
