import Foundation
import PerimeterEngine
import PerimeterGeoJSON

/// The body of `POST /v1/simulations`, validated: `{"deviceId", "path", "speed", "interval"?, "timeScale"?}`.
///
/// `path` is a GeoJSON LineString geometry or a Feature whose geometry is one; `speed` is in metres per
/// second, `interval` the simulated seconds between two updates (default 1), `timeScale` how many
/// simulated seconds pass per real second (default 1).
public struct SimulationRequest: Hashable, Sendable {
    /// The device that drives.
    public var device: DeviceID
    /// The vertices of the path as (latitude, longitude) pairs in degrees, at least two.
    public var path: [PathPoint]
    /// Metres per second along the path.
    public var speed: Double
    /// Simulated seconds between two updates.
    public var interval: Double
    /// Simulated seconds per real second.
    public var timeScale: Double

    /// One vertex of the path.
    public struct PathPoint: Hashable, Sendable {
        /// Degrees north, -90…90.
        public var latitude: Double
        /// Degrees east, -180…180.
        public var longitude: Double

        /// Creates a vertex.
        public init(latitude: Double, longitude: Double) {
            self.latitude = latitude
            self.longitude = longitude
        }
    }

    /// The most updates one simulation may send (longer drives are refused: raise `speed` or `interval`).
    public static let maximumUpdates = 200_000
    /// Largest `interval`, in seconds.
    public static let maximumInterval = 3600.0
    /// Largest `timeScale`.
    public static let maximumTimeScale = 10_000.0

    /// Creates a request (already valid values are assumed; use ``parse(_:)`` for request bodies).
    public init(device: DeviceID, path: [PathPoint], speed: Double, interval: Double = 1, timeScale: Double = 1) {
        self.device = device
        self.path = path
        self.speed = speed
        self.interval = interval
        self.timeScale = timeScale
    }

    /// Estimated number of updates: the great-circle length over `speed · interval`, plus the ends.
    /// - Complexity: O(vertices).
    public var estimatedUpdates: Double {
        var metres = 0.0
        for index in path.indices.dropFirst() {
            metres += Self.haversine(path[index - 1], path[index])
        }
        return metres / (speed * interval) + 2
    }

    /// Great-circle distance in metres on a sphere of the WGS84 mean radius (a size estimate only; the
    /// timing itself uses ``TrackSimulation``'s geodesic lengths).
    static func haversine(_ a: PathPoint, _ b: PathPoint) -> Double {
        let d2r = Double.pi / 180
        let dPhi = (b.latitude - a.latitude) * d2r, dLambda = (b.longitude - a.longitude) * d2r
        let h = sin(dPhi / 2) * sin(dPhi / 2)
            + cos(a.latitude * d2r) * cos(b.latitude * d2r) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * 6_371_008.8 * asin(min(1, h.squareRoot()))
    }

    /// Reads and validates a request body.
    /// - Throws: ``Problem`` 400 for a body that is not JSON, 422 naming the JSON pointer of the first
    ///   bad member (wrong type, out-of-range number, invalid GeoJSON, a path that is not a LineString,
    ///   a drive that would need more than ``maximumUpdates`` updates).
    public static func parse(_ body: [UInt8]) throws(Problem) -> SimulationRequest {
        let value = try PerimeterAPI.parseJSON(body)
        guard case .object(let object) = value else {
            throw Problem.invalidField(JSONPath(), "the body must be an object like {\"deviceId\": \"van-7\", \"path\": {\"type\": \"LineString\", …}, \"speed\": 12}")
        }
        guard case .string(let device)? = object["deviceId"] else {
            throw Problem.invalidField(JSONPath([.key("deviceId")]), "deviceId must be a string")
        }
        if let violation = RequestID.violation(device, name: "deviceId") {
            throw RequestID.bodyProblem(violation, at: JSONPath([.key("deviceId")]))
        }
        let speed = try number(object, "speed", default: nil, in: 0...1_000_000, openBelow: true)
        let interval = try number(object, "interval", default: 1, in: 0...maximumInterval, openBelow: true)
        let timeScale = try number(object, "timeScale", default: 1, in: 0...maximumTimeScale, openBelow: true)
        guard let pathValue = object["path"] else {
            throw Problem.invalidField(JSONPath([.key("path")]), "missing path: give a GeoJSON LineString geometry or a Feature with one")
        }
        let path = try readPath(pathValue)
        let request = SimulationRequest(device: DeviceID(device), path: path, speed: speed, interval: interval,
                                        timeScale: timeScale)
        let estimate = request.estimatedUpdates
        guard estimate <= Double(maximumUpdates) else {
            throw Problem(422, "simulation-too-long", title: "Simulation too long",
                          detail: "the path at \(speed) m/s every \(interval) s needs about \(Int(estimate)) updates; at most \(maximumUpdates) are allowed: raise speed or interval",
                          pointer: "/path", extra: ["limit": .integer(Int64(maximumUpdates))])
        }
        return request
    }

    /// A number member: required when `fallback` is nil, finite, inside `range` (excluding the lower
    /// bound when `openBelow`).
    static func number(_ object: [String: JSONValue], _ key: String, default fallback: Double?,
                       in range: ClosedRange<Double>, openBelow: Bool) throws(Problem) -> Double {
        let path = JSONPath([.key(key)])
        guard let value = object[key], !value.isNull else {
            guard let fallback else { throw Problem.invalidField(path, "missing \(key)") }
            return fallback
        }
        guard let number = value.doubleValue, number.isFinite else {
            throw Problem.invalidField(path, "\(key) must be a finite number")
        }
        guard range.contains(number), !(openBelow && number == range.lowerBound) else {
            let lower = openBelow ? "> \(range.lowerBound)" : "≥ \(range.lowerBound)"
            throw Problem.invalidField(path, "\(key) is \(number); it must be \(lower) and ≤ \(range.upperBound)")
        }
        return number
    }

    /// The vertices of a LineString geometry or of a Feature holding one, validated by ``GeoJSONReader``.
    static func readPath(_ value: JSONValue) throws(Problem) -> [PathPoint] {
        var bytes: [UInt8] = []
        JSONWriter().write(value, into: &bytes)
        let result = GeoJSONReader().read(bytes)
        if result.hasErrors {
            let errors = result.errors
            let first = errors[0]
            throw Problem(422, "invalid-geojson", title: "Invalid GeoJSON",
                          detail: "path\(first.path.jsonPointer): \(first.message)", pointer: "/path" + first.path.jsonPointer,
                          extra: ["errors": .array(errors.prefix(100).map { problem in
                              .object(["detail": .string(problem.message),
                                       "pointer": .string("/path" + problem.path.jsonPointer)])
                          })])
        }
        let line: GeoJSON.LineString
        switch result.object {
        case .geometry(.lineString(let geometry))?:
            line = geometry
        case .feature(let feature)?:
            guard case .lineString(let geometry)? = feature.geometry else {
                throw Problem(422, "wrong-geojson-type", title: "Wrong GeoJSON type",
                              detail: "the path feature's geometry must be a LineString", pointer: "/path/geometry/type")
            }
            line = geometry
        default:
            throw Problem(422, "wrong-geojson-type", title: "Wrong GeoJSON type",
                          detail: "path must be a GeoJSON LineString geometry or a Feature with a LineString geometry",
                          pointer: "/path/type")
        }
        let pointerBase = result.object.map { if case .feature = $0 { "/path/geometry/coordinates/" } else { "/path/coordinates/" } }
            ?? "/path/coordinates/"
        var points: [PathPoint] = []
        points.reserveCapacity(line.coordinates.count)
        for (index, position) in line.coordinates.enumerated() {
            guard position.latitude.isFinite, position.longitude.isFinite,
                  (-90...90).contains(position.latitude), (-180...180).contains(position.longitude) else {
                throw Problem(422, "invalid-field", title: "A field of the body is invalid",
                              detail: "vertex \(index) of the path (\(position.longitude), \(position.latitude)) is outside longitude -180…180, latitude -90…90",
                              pointer: pointerBase + String(index))
            }
            points.append(PathPoint(latitude: position.latitude, longitude: position.longitude))
        }
        guard points.count >= 2 else {
            throw Problem(422, "invalid-field", title: "A field of the body is invalid",
                          detail: "the path needs at least two vertices", pointer: String(pointerBase.dropLast()))
        }
        return points
    }
}
