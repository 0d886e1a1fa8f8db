extension GeoJSON {
    /// An RFC 7946 `bbox`: `[west, south, east, north]`, or with altitudes
    /// `[west, south, minAltitude, east, north, maxAltitude]`. `west > east` means the box crosses the antimeridian.
    public struct BoundingBox: Hashable, Sendable {
        /// The westernmost longitude.
        public var west: Double
        /// The southernmost latitude.
        public var south: Double
        /// The easternmost longitude.
        public var east: Double
        /// The northernmost latitude.
        public var north: Double
        /// The lowest and highest altitude, when the box has six numbers.
        public var altitudes: ClosedRange<Double>?

        /// Creates a bounding box.
        public init(west: Double, south: Double, east: Double, north: Double, altitudes: ClosedRange<Double>? = nil) {
            self.west = west
            self.south = south
            self.east = east
            self.north = north
            self.altitudes = altitudes
        }

        /// Creates a box from the numbers of a `bbox` member; `nil` unless there are 4 or 6 of them
        /// (and, for 6, the lower altitude is not above the upper one).
        public init?(numbers: [Double]) {
            switch numbers.count {
            case 4:
                self.init(west: numbers[0], south: numbers[1], east: numbers[2], north: numbers[3])
            case 6:
                guard numbers[2] <= numbers[5] else { return nil }
                self.init(west: numbers[0], south: numbers[1], east: numbers[3], north: numbers[4],
                          altitudes: numbers[2]...numbers[5])
            default:
                return nil
            }
        }

        /// The numbers of the `bbox` member, in RFC 7946 order.
        public var numbers: [Double] {
            if let altitudes {
                return [west, south, altitudes.lowerBound, east, north, altitudes.upperBound]
            }
            return [west, south, east, north]
        }
    }
}

extension GeoJSON.BoundingBox: Codable {
    /// Decodes an array of 4 or 6 numbers.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let numbers = try container.decode([Double].self)
        guard let box = Self(numbers: numbers) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: GeoJSON.Issue.Kind.badBoundingBox.message)
        }
        self = box
    }

    /// Encodes the array of numbers.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(numbers)
    }
}
