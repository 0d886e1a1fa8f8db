extension GeoJSON {
    /// A GeoJSON position: longitude and latitude in decimal degrees (WGS 84), and an optional altitude in metres.
    ///
    /// 24 bytes: the altitude is kept in a plain `Double`, with one signalling-NaN bit pattern standing for
    /// "none" (a `Double?` would make the position 25 bytes, 32 with padding). A large import holds millions
    /// of positions, and every byte of them is fresh memory the process has to fault in.
    public struct Position: Sendable {
        /// Degrees east, normally in -180...180.
        public var longitude: Double
        /// Degrees north, in -90...90.
        public var latitude: Double
        /// The altitude, or the bit pattern ``noAltitude``.
        @usableFromInline var storedAltitude: Double

        /// Metres above the WGS 84 ellipsoid, when the position has a third number.
        @inlinable public var altitude: Double? {
            get { storedAltitude.bitPattern == Self.noAltitude ? nil : storedAltitude }
            set { storedAltitude = Self.stored(newValue) }
        }

        /// Creates a position.
        @inlinable public init(longitude: Double, latitude: Double, altitude: Double? = nil) {
            self.longitude = longitude
            self.latitude = latitude
            self.storedAltitude = Self.stored(altitude)
        }

        /// The bits of the stored altitude that mean "no altitude": a signalling NaN, which no arithmetic
        /// produces (operations on NaNs give quiet ones) and no JSON number reads as.
        @usableFromInline static var noAltitude: UInt64 { 0x7FF0_0000_0000_0A17 }

        /// What is stored for `altitude`: a NaN altitude is kept as the quiet NaN, so that no given
        /// value ever reads back as "none".
        @inlinable static func stored(_ altitude: Double?) -> Double {
            guard let altitude else { return Double(bitPattern: noAltitude) }
            return altitude.isNaN ? .nan : altitude
        }
    }
}

// Equal and hashed as longitude, latitude and optional altitude (what a synthesized conformance over
// those three would do): the stored sentinel is a NaN, which is never equal to itself.
extension GeoJSON.Position: Hashable {
    @inlinable public static func == (a: Self, b: Self) -> Bool {
        a.longitude == b.longitude && a.latitude == b.latitude && a.altitude == b.altitude
    }

    @inlinable public func hash(into hasher: inout Hasher) {
        hasher.combine(longitude)
        hasher.combine(latitude)
        hasher.combine(altitude)
    }
}

// Printed as a struct of longitude, latitude and optional altitude, not with the stored sentinel.
extension GeoJSON.Position: CustomReflectable {
    public var customMirror: Mirror {
        Mirror(self, children: ["longitude": longitude, "latitude": latitude, "altitude": altitude as Any], displayStyle: .struct)
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
        let longitude = try container.decode(Double.self)
        let latitude = try container.decode(Double.self)
        let altitude = container.isAtEnd ? nil : try container.decode(Double.self)
        while !container.isAtEnd { _ = try container.decode(Double.self) }
        self.init(longitude: longitude, latitude: latitude, altitude: altitude)
    }

    /// Encodes `[longitude, latitude]` or `[longitude, latitude, altitude]`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        try container.encode(longitude)
        try container.encode(latitude)
        if let altitude { try container.encode(altitude) }
    }
}
