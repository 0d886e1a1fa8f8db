import Foundation
import PerimeterEngine

/// Reads newline-delimited JSON: one object per line, keys as the CSV column aliases.
///
/// Keys are looked up in the object, then in its `properties` object (so GeoJSON Point features one per
/// line also read). When there is no latitude/longitude key, `coordinates: [lon, lat]` at the top level or
/// in `geometry` or `location` gives the position. Blank lines are ignored; a line that is not a JSON
/// object, or lacks a required field, is skipped with a warning.
enum NDJSONReader {
    static func read(_ bytes: [UInt8], context: ReadContext) throws -> TrackReadResult {
        var log = ProblemLog(source: context.source)
        var updates = [LocationUpdate]()
        var notes = [FieldProblem]()
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 0
        var sawObject = false
        while start < bytes.count {
            line += 1
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            defer { start = end + 1 }
            guard bytes[start..<end].contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) else { continue }
            let object: [String: Any]
            do {
                guard let parsed = try JSONSerialization.jsonObject(with: Data(bytes[start..<end])) as? [String: Any] else {
                    log.add(line: line, "the line is JSON but not an object; line skipped")
                    continue
                }
                object = parsed
            } catch {
                log.add(line: line, "the line is not valid JSON (\(JSONText.describe(error))); line skipped")
                continue
            }
            sawObject = true
            notes.removeAll(keepingCapacity: true)
            let fields = JSONText.fields(of: object)
            let result = RecordBuilder.update(fields, defaultDevice: context.defaultDevice, notes: &notes)
            for note in notes { log.add(line: line, note.message) }
            switch result {
            case .success(let update): updates.append(update)
            case .failure(let problem): log.add(line: line, problem.message + "; line skipped")
            }
        }
        if !sawObject, let first = log.problems.first {
            // Not one line is a JSON object: the input is not NDJSON at all.
            throw TrackProblem(source: context.source, line: first.line, message: "not NDJSON: " + first.message)
        }
        return TrackReadResult(updates: updates, warnings: log.finished())
    }
}

/// Helpers shared by the JSON-based readers.
enum JSONText {
    /// A short description of a JSONSerialization error.
    static func describe(_ error: Error) -> String {
        let ns = error as NSError
        if let debug = ns.userInfo["NSDebugDescription"] as? String { return debug }
        return ns.localizedDescription
    }

    /// A JSON value as a field value (`nil` for null or absent).
    static func value(_ any: Any?) -> FieldValue? {
        guard let any, !(any is NSNull) else { return nil }
        if let s = any as? String { return .text(s) }
        if let n = any as? NSNumber {
            if isBoolean(n) { return .other(n.boolValue ? "true" : "false") }
            return .number(n.doubleValue)
        }
        if any is [Any] { return .other("an array") }
        if any is [String: Any] { return .other("an object") }
        return .other("\(any)")
    }

    /// Whether an NSNumber is a JSON boolean (Foundation hands booleans out as a distinct NSNumber subclass).
    private static func isBoolean(_ n: NSNumber) -> Bool {
        String(describing: type(of: n)).contains("Bool")
    }

    /// The record fields of a JSON object (keys by alias, then `properties`, then `coordinates`).
    static func fields(of object: [String: Any]) -> [FieldValue?] {
        var fields = [FieldValue?](repeating: nil, count: FieldRole.allCases.count)
        func fill(from dictionary: [String: Any]) {
            for role in FieldRole.allCases where fields[role.rawValue] == nil {
                for (key, value) in dictionary where role.aliases.contains(FieldRole.normalise(key)) {
                    if let v = JSONText.value(value) { fields[role.rawValue] = v; break }
                }
            }
        }
        fill(from: object)
        if let properties = object["properties"] as? [String: Any] { fill(from: properties) }
        if fields[FieldRole.latitude.rawValue] == nil, fields[FieldRole.longitude.rawValue] == nil {
            let coordinates = object["coordinates"] ?? (object["geometry"] as? [String: Any])?["coordinates"]
                ?? (object["location"] as? [String: Any])?["coordinates"]
            if let pair = coordinates as? [Any], pair.count >= 2 {
                fields[FieldRole.longitude.rawValue] = value(pair[0])
                fields[FieldRole.latitude.rawValue] = value(pair[1])
            }
        }
        return fields
    }
}
