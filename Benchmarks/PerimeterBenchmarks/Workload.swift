import PerimeterGeometry

/// The reference geofencing workload: polygon fences, circle fences and a stream of location fixes.
///
/// Fence numbers are positions in ``fences`` (and in ``circles``), and every peer refers to a fence by
/// that number; fix numbers (`seq`) are positions in the stream, which is in time order.
public struct Workload: Sendable {
    /// One polygon fence.
    public struct PolygonFence: Sendable {
        /// What the generator made it as.
        public enum Kind: String, Sendable, CaseIterable {
            /// A star polygon of 20–200 vertices.
            case small
            /// A small star polygon with one hole.
            case smallHole = "small_hole"
            /// A fractal-ish polygon of 1,000–20,000 vertices.
            case large
            /// A multipolygon of 2–6 disjoint parts.
            case multi
        }

        /// The generator's category.
        public var kind: Kind
        /// Polygons, each as closed rings (exterior first, then holes), in lon/lat degrees.
        public var polygons: [[[Coordinate]]]

        /// Creates a fence.
        public init(kind: Kind, polygons: [[[Coordinate]]]) {
            self.kind = kind
            self.polygons = polygons
        }

        /// Number of vertices, closing vertices included.
        public var vertexCount: Int { polygons.reduce(0) { $0 + $1.reduce(0) { $0 + $1.count } } }
    }

    /// One circle fence.
    public struct CircleFence: Sendable {
        /// Centre.
        public var center: Coordinate
        /// Radius in metres.
        public var radius: Double

        /// Creates a circle fence.
        public init(center: Coordinate, radius: Double) {
            self.center = center
            self.radius = radius
        }
    }

    /// Fixes in stream (time) order, as columns.
    public struct Fixes: Sendable {
        /// Device number of each fix.
        public var device: [UInt32] = []
        /// Time of each fix, seconds since 1970.
        public var time: [Double] = []
        /// Longitude of each fix, degrees.
        public var longitude: [Double] = []
        /// Latitude of each fix, degrees.
        public var latitude: [Double] = []

        /// Creates an empty stream.
        public init() {}

        /// Number of fixes.
        public var count: Int { time.count }

        /// Number of distinct devices (largest device number + 1).
        public var deviceCount: Int { Int(device.max() ?? 0) + (device.isEmpty ? 0 : 1) }

        /// The first `n` fixes.
        public func prefix(_ n: Int) -> Fixes {
            var result = Fixes()
            let k = Swift.min(n, count)
            result.device = Array(device[..<k])
            result.time = Array(time[..<k])
            result.longitude = Array(longitude[..<k])
            result.latitude = Array(latitude[..<k])
            return result
        }
    }

    /// Where the workload came from (for the report).
    public var origin: String
    /// Polygon fences.
    public var fences: [PolygonFence]
    /// Circle fences (a separate workload: only the engine and PostGIS run it).
    public var circles: [CircleFence]
    /// Location fixes.
    public var fixes: Fixes

    /// Creates a workload.
    public init(origin: String, fences: [PolygonFence], circles: [CircleFence], fixes: Fixes) {
        self.origin = origin
        self.fences = fences
        self.circles = circles
        self.fixes = fixes
    }

    /// Total vertices of the polygon fences.
    public var vertexCount: Int { fences.reduce(0) { $0 + $1.vertexCount } }
}
