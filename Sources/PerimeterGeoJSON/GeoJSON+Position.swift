extension GeoJSON {
    /// A GeoJSON position: longitude and latitude in decimal degrees (WGS 84), and an optional altitude in metres.
    public struct Position: Hashable, Sendable {
        /// Degrees east, normally in -180...180.
        public var longitude: Double
        /// Degrees north, in -90...90.
        public var latitude: Double
        /// Metres above the WGS 84 ellipsoid, when the position has a third number.
        public var altitude: Double?

        /// Creates a position.
        public init(longitude: Double, latitude: Double, altitude: Double? = nil) {
            self.longitude = longitude
            self.latitude = latitude
            self.altitude = altitude
        }
    }
}

extension GeoJSON.Position: Codable {
    /// Decodes `[longitude, latitude]` or `[longitude, latitude, altitude]`; numbers after the third are ignored.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        guard (container.count ?? 0) >= 2 else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: GeoJSON.Issue.Kind.shortPosition(count: container.count ?? 0).message)
        }
        longitude = try container.decode(Double.self)
        latitude = try container.decode(Double.self)
        altitude = container.isAtEnd ? nil : try container.decode(Double.self)
        while !container.isAtEnd { _ = try container.decode(Double.self) }
    }

    /// Encodes `[longitude, latitude]` or `[longitude, latitude, altitude]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(longitude)
        try container.encode(latitude)
        if let altitude { try container.encode(altitude) }
    }
}
