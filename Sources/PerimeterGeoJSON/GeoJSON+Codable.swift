// Codable conformances of the GeoJSON model. Decoding reads "type" first, rejects unknown or mismatched types,
// missing "coordinates" and every structural error that ``GeoJSON/Validation`` finds (as `DecodingError`);
// foreign members are ignored. Encoding writes valid RFC 7946 members.

extension GeoJSON {
    enum CodingKeys: String, CodingKey {
        case type, coordinates, geometries, bbox, id, geometry, properties, features
    }

    /// Reads and checks the `"type"` member.
    static func decodeType(_ container: KeyedDecodingContainer<CodingKeys>, expecting expected: [String]) throws -> String {
        let type = try container.decode(String.self, forKey: .type)
        guard expected.contains(type) else {
            throw DecodingError.dataCorruptedError(
                forKey: .type, in: container,
                debugDescription: "unknown or unexpected type \"\(type)\", expected \(expected.joined(separator: " or "))")
        }
        return type
    }

    /// Throws the first validation error of `geometry`, if any.
    static func validate(_ geometry: Geometry, _ container: KeyedDecodingContainer<CodingKeys>) throws {
        if let message = Validation.firstError(of: geometry) {
            throw DecodingError.dataCorrupted(.init(codingPath: container.codingPath, debugDescription: message))
        }
    }

    /// Decodes the `coordinates` and `bbox` members of a geometry of type `name`.
    static func decodeMembers<C: Decodable>(_ decoder: any Decoder, name: String, as _: C.Type)
        throws -> (KeyedDecodingContainer<CodingKeys>, C, BoundingBox?) {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        _ = try decodeType(container, expecting: [name])
        let coordinates = try container.decode(C.self, forKey: .coordinates)
        let bbox = try container.decodeIfPresent(BoundingBox.self, forKey: .bbox)
        return (container, coordinates, bbox)
    }

    /// Encodes `type`, `bbox` and `coordinates`.
    static func encodeMembers<C: Encodable>(_ encoder: any Encoder, name: String, coordinates: C, bbox: BoundingBox?) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(name, forKey: .type)
        try container.encodeIfPresent(bbox, forKey: .bbox)
        try container.encode(coordinates, forKey: .coordinates)
    }
}

extension GeoJSON.Point: Codable {
    /// Decodes and validates a `Point`.
    public init(from decoder: any Decoder) throws {
        let (container, coordinates, bbox) = try GeoJSON.decodeMembers(decoder, name: "Point", as: GeoJSON.Position.self)
        self.init(coordinates, bbox: bbox)
        try GeoJSON.validate(.point(self), container)
    }

    /// Encodes the `Point` object.
    public func encode(to encoder: any Encoder) throws {
        try GeoJSON.encodeMembers(encoder, name: "Point", coordinates: coordinates, bbox: bbox)
    }
}

extension GeoJSON.MultiPoint: Codable {
    /// Decodes and validates a `MultiPoint`.
    public init(from decoder: any Decoder) throws {
        let (container, coordinates, bbox) = try GeoJSON.decodeMembers(decoder, name: "MultiPoint", as: [GeoJSON.Position].self)
        self.init(coordinates, bbox: bbox)
        try GeoJSON.validate(.multiPoint(self), container)
    }

    /// Encodes the `MultiPoint` object.
    public func encode(to encoder: any Encoder) throws {
        try GeoJSON.encodeMembers(encoder, name: "MultiPoint", coordinates: coordinates, bbox: bbox)
    }
}

extension GeoJSON.LineString: Codable {
    /// Decodes and validates a `LineString`.
    public init(from decoder: any Decoder) throws {
        let (container, coordinates, bbox) = try GeoJSON.decodeMembers(decoder, name: "LineString", as: [GeoJSON.Position].self)
        self.init(coordinates, bbox: bbox)
        try GeoJSON.validate(.lineString(self), container)
    }

    /// Encodes the `LineString` object.
    public func encode(to encoder: any Encoder) throws {
        try GeoJSON.encodeMembers(encoder, name: "LineString", coordinates: coordinates, bbox: bbox)
    }
}

extension GeoJSON.MultiLineString: Codable {
    /// Decodes and validates a `MultiLineString`.
    public init(from decoder: any Decoder) throws {
        let (container, coordinates, bbox) = try GeoJSON.decodeMembers(
            decoder, name: "MultiLineString", as: [[GeoJSON.Position]].self)
        self.init(coordinates, bbox: bbox)
        try GeoJSON.validate(.multiLineString(self), container)
    }

    /// Encodes the `MultiLineString` object.
    public func encode(to encoder: any Encoder) throws {
        try GeoJSON.encodeMembers(encoder, name: "MultiLineString", coordinates: coordinates, bbox: bbox)
    }
}

extension GeoJSON.Polygon: Codable {
    /// Decodes and validates a `Polygon`.
    public init(from decoder: any Decoder) throws {
        let (container, coordinates, bbox) = try GeoJSON.decodeMembers(decoder, name: "Polygon", as: [[GeoJSON.Position]].self)
        self.init(coordinates, bbox: bbox)
        try GeoJSON.validate(.polygon(self), container)
    }

    /// Encodes the `Polygon` object.
    public func encode(to encoder: any Encoder) throws {
        try GeoJSON.encodeMembers(encoder, name: "Polygon", coordinates: coordinates, bbox: bbox)
    }
}

extension GeoJSON.MultiPolygon: Codable {
    /// Decodes and validates a `MultiPolygon`.
    public init(from decoder: any Decoder) throws {
        let (container, coordinates, bbox) = try GeoJSON.decodeMembers(
            decoder, name: "MultiPolygon", as: [[[GeoJSON.Position]]].self)
        self.init(coordinates, bbox: bbox)
        try GeoJSON.validate(.multiPolygon(self), container)
    }

    /// Encodes the `MultiPolygon` object.
    public func encode(to encoder: any Encoder) throws {
        try GeoJSON.encodeMembers(encoder, name: "MultiPolygon", coordinates: coordinates, bbox: bbox)
    }
}

extension GeoJSON.GeometryCollection: Codable {
    /// Decodes a `GeometryCollection` (its members are validated as they decode).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: GeoJSON.CodingKeys.self)
        _ = try GeoJSON.decodeType(container, expecting: ["GeometryCollection"])
        self.init(try container.decode([GeoJSON.Geometry].self, forKey: .geometries),
                  bbox: try container.decodeIfPresent(GeoJSON.BoundingBox.self, forKey: .bbox))
    }

    /// Encodes the `GeometryCollection` object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: GeoJSON.CodingKeys.self)
        try container.encode("GeometryCollection", forKey: .type)
        try container.encodeIfPresent(bbox, forKey: .bbox)
        try container.encode(geometries, forKey: .geometries)
    }
}

extension GeoJSON.Geometry: Codable {
    static let typeNames = ["Point", "MultiPoint", "LineString", "MultiLineString", "Polygon", "MultiPolygon",
                            "GeometryCollection"]

    /// Decodes any geometry, dispatching on `"type"`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: GeoJSON.CodingKeys.self)
        switch try GeoJSON.decodeType(container, expecting: Self.typeNames) {
        case "Point": self = .point(try GeoJSON.Point(from: decoder))
        case "MultiPoint": self = .multiPoint(try GeoJSON.MultiPoint(from: decoder))
        case "LineString": self = .lineString(try GeoJSON.LineString(from: decoder))
        case "MultiLineString": self = .multiLineString(try GeoJSON.MultiLineString(from: decoder))
        case "Polygon": self = .polygon(try GeoJSON.Polygon(from: decoder))
        case "MultiPolygon": self = .multiPolygon(try GeoJSON.MultiPolygon(from: decoder))
        default: self = .geometryCollection(try GeoJSON.GeometryCollection(from: decoder))
        }
    }

    /// Encodes the geometry object.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .point(let g): try g.encode(to: encoder)
        case .multiPoint(let g): try g.encode(to: encoder)
        case .lineString(let g): try g.encode(to: encoder)
        case .multiLineString(let g): try g.encode(to: encoder)
        case .polygon(let g): try g.encode(to: encoder)
        case .multiPolygon(let g): try g.encode(to: encoder)
        case .geometryCollection(let g): try g.encode(to: encoder)
        }
    }
}

extension GeoJSON.FeatureID: Codable {
    /// Decodes a string or a number (integers exactly).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "feature id must be a string or a number")
        }
    }

    /// Encodes the string or number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        }
    }
}

extension GeoJSON.Feature: Codable {
    /// Decodes a `Feature`; a missing or null `geometry` is `nil`, missing or null `properties` are empty.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: GeoJSON.CodingKeys.self)
        _ = try GeoJSON.decodeType(container, expecting: ["Feature"])
        self.init(id: try container.decodeIfPresent(GeoJSON.FeatureID.self, forKey: .id),
                  geometry: try container.decodeIfPresent(GeoJSON.Geometry.self, forKey: .geometry),
                  properties: try container.decodeIfPresent([String: JSONValue].self, forKey: .properties) ?? [:],
                  bbox: try container.decodeIfPresent(GeoJSON.BoundingBox.self, forKey: .bbox))
    }

    /// Encodes the `Feature` object (`"geometry": null` when it has none; `properties` always present).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: GeoJSON.CodingKeys.self)
        try container.encode("Feature", forKey: .type)
        try container.encodeIfPresent(id, forKey: .id)
        try container.encodeIfPresent(bbox, forKey: .bbox)
        if let geometry { try container.encode(geometry, forKey: .geometry) } else { try container.encodeNil(forKey: .geometry) }
        try container.encode(properties, forKey: .properties)
    }
}

extension GeoJSON.FeatureCollection: Codable {
    /// Decodes a `FeatureCollection`; any invalid feature fails the whole decode (the fast reader skips it instead).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: GeoJSON.CodingKeys.self)
        _ = try GeoJSON.decodeType(container, expecting: ["FeatureCollection"])
        self.init(try container.decode([GeoJSON.Feature].self, forKey: .features),
                  bbox: try container.decodeIfPresent(GeoJSON.BoundingBox.self, forKey: .bbox))
    }

    /// Encodes the `FeatureCollection` object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: GeoJSON.CodingKeys.self)
        try container.encode("FeatureCollection", forKey: .type)
        try container.encodeIfPresent(bbox, forKey: .bbox)
        try container.encode(features, forKey: .features)
    }
}

extension GeoJSON.Object: Codable {
    /// Decodes any GeoJSON object, dispatching on `"type"`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: GeoJSON.CodingKeys.self)
        switch try GeoJSON.decodeType(container, expecting: ["FeatureCollection", "Feature"] + GeoJSON.Geometry.typeNames) {
        case "FeatureCollection": self = .featureCollection(try GeoJSON.FeatureCollection(from: decoder))
        case "Feature": self = .feature(try GeoJSON.Feature(from: decoder))
        default: self = .geometry(try GeoJSON.Geometry(from: decoder))
        }
    }

    /// Encodes the object.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .geometry(let g): try g.encode(to: encoder)
        case .feature(let f): try f.encode(to: encoder)
        case .featureCollection(let c): try c.encode(to: encoder)
        }
    }
}
