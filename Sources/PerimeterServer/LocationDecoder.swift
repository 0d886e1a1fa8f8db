import Foundation
import PerimeterEngine
import PerimeterGeoJSON

/// Turns the JSON of one location update into a ``LocationUpdate``, or says what is wrong and where.
///
/// Shape: `{"deviceId": "truck-7", "latitude": 44.6, "longitude": -110.5, "time": "2025-03-26T17:19:33Z",
/// "accuracy": 12}`; `time` may also be Unix seconds; `accuracy` (alias `horizontalAccuracy`), `speed`
/// and `course` are optional.
public enum LocationDecoder {
    /// A problem with one update: the JSON path of the offending member and what is wrong.
    public struct Failure: Error, Hashable, Sendable {
        /// Where.
        public var path: JSONPath
        /// What.
        public var message: String
    }

    /// Decodes `value` found at `path`.
    public static func decode(_ value: JSONValue, at path: JSONPath) throws(Failure) -> LocationUpdate {
        guard case .object(let object) = value else {
            throw Failure(path: path, message: "an update must be a JSON object with deviceId, latitude, longitude, time")
        }
        guard let deviceValue = object["deviceId"] ?? object["device"] else {
            throw Failure(path: path.appending(.key("deviceId")), message: "missing deviceId")
        }
        guard case .string(let device) = deviceValue else {
            throw Failure(path: path.appending(.key("deviceId")), message: "deviceId must be a string")
        }
        if let violation = RequestID.violation(device, name: "deviceId") {
            throw Failure(path: path.appending(.key("deviceId")), message: violation)
        }
        let latitude = try number(object, "latitude", path)
        guard latitude >= -90 && latitude <= 90 else {
            throw Failure(path: path.appending(.key("latitude")), message: "latitude \(latitude) is outside -90...90")
        }
        let longitude = try number(object, "longitude", path)
        guard longitude >= -180 && longitude <= 180 else {
            throw Failure(path: path.appending(.key("longitude")), message: "longitude \(longitude) is outside -180...180")
        }
        let time: Date
        switch object["time"] {
        case .string(let text)?:
            guard let date = RFC3339.date(from: text) else {
                throw Failure(path: path.appending(.key("time")), message: "time \"\(text)\" is not an RFC 3339 date-time (2025-03-26T17:19:33Z)")
            }
            time = date
        case .integer(let seconds)?:
            time = Date(timeIntervalSince1970: Double(seconds))
        case .double(let seconds)? where seconds.isFinite:
            time = Date(timeIntervalSince1970: seconds)
        case nil:
            throw Failure(path: path.appending(.key("time")), message: "missing time")
        default:
            throw Failure(path: path.appending(.key("time")), message: "time must be an RFC 3339 string or Unix seconds")
        }
        // The engine refuses such times too; refusing them here names the member, and keeps them from
        // moving a data clock before the engine sees them.
        if let problem = LocationUpdate.timeProblem(time.timeIntervalSince1970) {
            throw Failure(path: path.appending(.key("time")), message: problem)
        }
        let accuracyKey = object["accuracy"] != nil ? "accuracy" : "horizontalAccuracy"
        let accuracy = try optionalNumber(object, accuracyKey, path)
        if let accuracy, accuracy < 0 {
            throw Failure(path: path.appending(.key(accuracyKey)), message: "accuracy must be ≥ 0 metres")
        }
        return LocationUpdate(device: DeviceID(device), time: time, latitude: latitude, longitude: longitude,
                              horizontalAccuracy: accuracy, speed: try optionalNumber(object, "speed", path),
                              course: try optionalNumber(object, "course", path))
    }

    static func number(_ object: [String: JSONValue], _ key: String, _ path: JSONPath) throws(Failure) -> Double {
        guard let value = object[key] else { throw Failure(path: path.appending(.key(key)), message: "missing \(key)") }
        guard let number = value.doubleValue, number.isFinite else {
            throw Failure(path: path.appending(.key(key)), message: "\(key) must be a finite number")
        }
        return number
    }

    static func optionalNumber(_ object: [String: JSONValue], _ key: String, _ path: JSONPath) throws(Failure) -> Double? {
        guard let value = object[key], !value.isNull else { return nil }
        return try number(object, key, path)
    }
}
