extension GeoJSON {
    /// The `id` of a feature: a string or a number, kept exactly as written.
    public enum FeatureID: Hashable, Sendable, CustomStringConvertible {
        /// A string id.
        case string(String)
        /// An integer id that fits in `Int64` (kept exactly, e.g. 9007199254740993).
        case integer(Int64)
        /// Any other numeric id.
        case double(Double)

        /// The id as written in JSON (strings unquoted).
        public var description: String {
            switch self {
            case .string(let value): value
            case .integer(let value): String(value)
            case .double(let value): JSONWriter.format(value) ?? "null"
            }
        }
    }

    /// A `Feature`: an optional geometry with properties and an optional id.
    ///
    /// Foreign members are accepted when reading and not kept.
    public struct Feature: Hashable, Sendable {
        /// The `id` member, if any (`"id": null` reads as `nil`).
        public var id: FeatureID?
        /// The geometry; `nil` for `"geometry": null` (an unlocated feature).
        public var geometry: Geometry?
        /// The `properties` member; `null` or a missing member reads as empty.
        public var properties: [String: JSONValue]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a feature.
        public init(id: FeatureID? = nil, geometry: Geometry?, properties: [String: JSONValue] = [:],
                    bbox: BoundingBox? = nil) {
            self.id = id
            self.geometry = geometry
            self.properties = properties
            self.bbox = bbox
        }
    }

    /// A `FeatureCollection`.
    public struct FeatureCollection: Hashable, Sendable {
        /// The features, in file order.
        public var features: [Feature]
        /// The optional `bbox` member.
        public var bbox: BoundingBox?

        /// Creates a feature collection.
        public init(_ features: [Feature], bbox: BoundingBox? = nil) {
            self.features = features
            self.bbox = bbox
        }
    }

    /// Any top-level GeoJSON object.
    public enum Object: Hashable, Sendable {
        /// A bare geometry.
        case geometry(Geometry)
        /// A single feature.
        case feature(Feature)
        /// A feature collection.
        case featureCollection(FeatureCollection)

        /// All features: the collection's, the single feature, or a bare geometry wrapped in a feature.
        public var features: [Feature] {
            switch self {
            case .geometry(let geometry): [Feature(geometry: geometry)]
            case .feature(let feature): [feature]
            case .featureCollection(let collection): collection.features
            }
        }
    }
}
