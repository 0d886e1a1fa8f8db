extension GeoJSON {
    /// Any RFC 7946 geometry.
    public indirect enum Geometry: Hashable, Sendable {
        /// A `Point`.
        case point(Point)
        /// A `MultiPoint`.
        case multiPoint(MultiPoint)
        /// A `LineString`.
        case lineString(LineString)
        /// A `MultiLineString`.
        case multiLineString(MultiLineString)
        /// A `Polygon`.
        case polygon(Polygon)
        /// A `MultiPolygon`.
        case multiPolygon(MultiPolygon)
        /// A `GeometryCollection`.
        case geometryCollection(GeometryCollection)

        /// The value of the `"type"` member.
        public var typeName: String {
            switch self {
            case .point: "Point"
            case .multiPoint: "MultiPoint"
            case .lineString: "LineString"
            case .multiLineString: "MultiLineString"
            case .polygon: "Polygon"
            case .multiPolygon: "MultiPolygon"
            case .geometryCollection: "GeometryCollection"
            }
        }

        /// The `bbox` member of the geometry, if any.
        public var bbox: BoundingBox? {
            switch self {
            case .point(let g): g.bbox
            case .multiPoint(let g): g.bbox
            case .lineString(let g): g.bbox
            case .multiLineString(let g): g.bbox
            case .polygon(let g): g.bbox
            case .multiPolygon(let g): g.bbox
            case .geometryCollection(let g): g.bbox
            }
        }
    }

    /// A `GeometryCollection`: geometries of any type.
    public struct GeometryCollection: Hashable, Sendable {
        /// The geometries.
        public var geometries: [Geometry]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a geometry collection.
        public init(_ geometries: [Geometry], bbox: BoundingBox? = nil) {
            self.geometries = geometries
            self.bbox = bbox
        }
    }
}
