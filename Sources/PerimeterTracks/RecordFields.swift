import Foundation
import PerimeterEngine

/// The fields a record-based format (CSV, NDJSON, GeoJSON properties) can carry, with their aliases.
enum FieldRole: Int, CaseIterable {
    case device, time, latitude, longitude, accuracy, speed, course

    /// Accepted names, normalised (lower case, without `_`, `-`, spaces), in order of preference.
    var aliases: [String] {
        switch self {
        case .device: return ["deviceid", "device", "userid", "user", "id", "trackerid", "tracker", "vehicleid", "vehicle"]
        case .time: return ["time", "timestamp", "trackedat", "datetime", "date", "ts", "t", "utc"]
        case .latitude: return ["lat", "latitude", "y"]
        case .longitude: return ["lon", "lng", "long", "longitude", "x"]
        case .accuracy: return ["accuracy", "horizontalaccuracy", "hacc", "acc", "haccuracy", "horacc"]
        case .speed: return ["speed", "velocity", "spd"]
        case .course: return ["course", "heading", "bearing", "cog"]
        }
    }

    /// The name used in messages.
    var displayName: String {
        switch self {
        case .device: return "device id"
        case .time: return "time"
        case .latitude: return "latitude"
        case .longitude: return "longitude"
        case .accuracy: return "accuracy"
        case .speed: return "speed"
        case .course: return "course"
        }
    }

    /// Lower case without `_`, `-`, `.` and spaces: the form aliases are compared in.
    static func normalise(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.filter { $0 != "_" && $0 != "-" && $0 != " " && $0 != "." && $0 != "\t" && $0 != "\u{FEFF}" })
    }

    /// The role a column or key name has, if any.
    static func role(forName name: String) -> FieldRole? {
        let key = normalise(name)
        return allCases.first { $0.aliases.contains(key) }
    }
}

/// A raw field value: text (CSV, JSON strings) or a JSON number.
enum FieldValue {
    case text(String)
    /// A JSON number with a fraction or an exponent (or beyond the `Int64` range).
    case number(Double)
    /// A JSON integer, kept exact (epoch milliseconds and microseconds, numeric device ids).
    case integer(Int64)
    /// Something else (a JSON object, array or boolean), described for messages.
    case other(String)

    /// Quoted form for messages.
    var quoted: String {
        switch self {
        case .text(let s): return "\"\(s.count > 60 ? String(s.prefix(60)) + "…" : s)\""
        case .number(let v): return "\(v)"
        case .integer(let v): return "\(v)"
        case .other(let d): return d
        }
    }

    /// Empty text counts as absent.
    var isEmpty: Bool {
        if case .text(let s) = self { return s.allSatisfy { $0 == " " || $0 == "\t" } }
        return false
    }

    var number: Double? {
        switch self {
        case .text(let s): return TrackNumber.parse(s)
        case .number(let v): return v.isFinite ? v : nil
        case .integer(let v): return Double(v)
        case .other: return nil
        }
    }

    var date: Date? {
        switch self {
        case .text(let s): return TrackTime.parse(s)
        case .number(let v): return TrackTime.epoch(v)
        case .integer(let v): return TrackTime.epoch(v)
        case .other: return nil
        }
    }
}

/// A problem with one field of a record.
struct FieldProblem: Error {
    var role: FieldRole?
    var message: String
}

/// Builds updates from record fields, validating each.
enum RecordBuilder {
    /// The update for `fields`, or the problem that makes the record unusable; `notes` receives problems
    /// with optional fields (the field is ignored, the record kept).
    static func update(_ fields: [FieldValue?], defaultDevice: DeviceID, notes: inout [FieldProblem]) -> Result<LocationUpdate, FieldProblem> {
        func field(_ role: FieldRole) -> FieldValue? {
            guard let value = fields[role.rawValue], !value.isEmpty else { return nil }
            return value
        }
        guard let timeValue = field(.time) else { return .failure(FieldProblem(role: .time, message: "the record has no time")) }
        guard let time = timeValue.date else {
            return .failure(FieldProblem(role: .time, message: "time \(timeValue.quoted) is neither ISO 8601 nor an epoch number"))
        }
        let latitude: Double, longitude: Double
        switch coordinate(field(.latitude), .latitude, limit: 90) {
        case .success(let v): latitude = v
        case .failure(let p): return .failure(p)
        }
        switch coordinate(field(.longitude), .longitude, limit: 180) {
        case .success(let v): longitude = v
        case .failure(let p): return .failure(p)
        }
        var device = defaultDevice
        if let value = field(.device) {
            switch value {
            case .text(let s): device = DeviceID(s)
            case .number(let v): device = DeviceID(v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v))
            case .integer(let v): device = DeviceID(String(v))
            case .other(let d): return .failure(FieldProblem(role: .device, message: "device id \(d) is not a string or number"))
            }
        }
        let accuracy = optional(field(.accuracy), .accuracy, notes: &notes)
        let speed = optional(field(.speed), .speed, notes: &notes)
        var course = optional(field(.course), .course, notes: &notes)
        if let c = course { course = c.truncatingRemainder(dividingBy: 360) }
        return .success(LocationUpdate(device: device, time: time, latitude: latitude, longitude: longitude,
                                       horizontalAccuracy: accuracy, speed: speed, course: course))
    }

    /// A latitude or longitude, checked to lie within ±`limit`.
    static func coordinate(_ value: FieldValue?, _ role: FieldRole, limit: Double) -> Result<Double, FieldProblem> {
        guard let value else { return .failure(FieldProblem(role: role, message: "the record has no \(role.displayName)")) }
        guard let number = value.number else {
            return .failure(FieldProblem(role: role, message: "\(role.displayName) \(value.quoted) is not a number"))
        }
        guard abs(number) <= limit else {
            return .failure(FieldProblem(role: role, message: "\(role.displayName) \(number) is outside -\(Int(limit))…\(Int(limit))"))
        }
        return .success(number)
    }

    /// An optional non-negative quantity; negative means "unknown" (the iOS convention) and gives `nil`
    /// silently; text that is not a number gives `nil` and a note.
    static func optional(_ value: FieldValue?, _ role: FieldRole, notes: inout [FieldProblem]) -> Double? {
        guard let value else { return nil }
        guard let number = value.number else {
            notes.append(FieldProblem(role: role, message: "\(role.displayName) \(value.quoted) is not a number; \(role.displayName) ignored"))
            return nil
        }
        return number < 0 ? nil : number
    }
}
