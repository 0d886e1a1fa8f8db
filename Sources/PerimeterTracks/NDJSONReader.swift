import PerimeterEngine
import PerimeterGeoJSON

/// Reads newline-delimited JSON: one object per line, keys as the CSV column aliases.
///
/// Keys are looked up in the object, then in its `properties` object (so GeoJSON Point features one per
/// line also read). When there is no latitude/longitude key, `coordinates: [lon, lat]` at the top level or
/// in `geometry` or `location` gives the position. Blank lines are ignored; a line that is not a JSON
/// object, or lacks a required field, is skipped with a warning naming its line (and, for JSON syntax
/// errors, the column).
///
/// Each line is parsed in place by ``JSONParser`` (no copy of its bytes).
enum NDJSONReader {
    /// - Complexity: O(n), one pass; memory O(longest line) besides the updates.
    static func read(_ bytes: [UInt8], context: ReadContext) throws -> TrackReadResult {
        var log = ProblemLog(source: context.source)
        var updates = [LocationUpdate]()
        var notes = [FieldProblem]()
        var keys = FieldKeyTable()
        let parser = JSONParser()
        var sawObject = false
        bytes.withUnsafeBytes { buffer in
            let count = buffer.count
            var lineStart = 0
            var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            var line = 0
            while start < count {
                line += 1
                var end = start
                while end < count, buffer[end] != 0x0A { end += 1 }
                defer { start = end + 1; lineStart = end + 1 }
                var first = start
                while first < end, buffer[first] == 0x20 || buffer[first] == 0x09 || buffer[first] == 0x0D { first += 1 }
                guard first < end else { continue }
                let value: JSONValue
                do throws(JSONParseError) {
                    value = try parser.parse(UnsafeRawBufferPointer(rebasing: buffer[start..<end]))
                } catch {
                    // The line holds no newline, so the error's byte offset in it gives the column.
                    log.add(line: line, column: start - lineStart + error.offset + 1,
                            "the line is not valid JSON (\(error.message)); line skipped")
                    continue
                }
                guard case .object(let object) = value else {
                    log.add(line: line, column: first - lineStart + 1, "the line is JSON but not an object; line skipped")
                    continue
                }
                sawObject = true
                notes.removeAll(keepingCapacity: true)
                let fields = JSONFields.fields(of: object, keys: &keys)
                let result = RecordBuilder.update(fields, defaultDevice: context.defaultDevice, notes: &notes)
                for note in notes { log.add(line: line, note.message) }
                switch result {
                case .success(let update): updates.append(update)
                case .failure(let problem): log.add(line: line, problem.message + "; line skipped")
                }
            }
        }
        if !sawObject, let first = log.problems.first {
            // Not one line is a JSON object: the input is not NDJSON at all.
            throw TrackProblem(source: context.source, line: first.line, column: first.column, message: "not NDJSON: " + first.message)
        }
        return TrackReadResult(updates: updates, warnings: log.finished())
    }
}
