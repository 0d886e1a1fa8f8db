import Foundation
import PerimeterEngine
import PerimeterGeoJSON

/// Decodes the body of a `POST /v1/locations` (a JSON array of updates, one update, or NDJSON) straight
/// from its bytes into ``LocationUpdate``s: no ``JSONValue`` per item, no dictionaries, member names
/// compared as bytes, each device id made a `String` once.
///
/// It agrees with ``LocationBatch/tree(_:ndjson:)`` on every body — same updates, same rejections with the
/// same paths and messages — by doing only the common case itself: an item it cannot decode without doubt
/// (a wrong type, a value out of range, an unreadable time, …) is parsed again by ``JSONParser`` and handed
/// to ``LocationDecoder``, which says what is wrong exactly as before; a body that is not JSON at all, or not
/// an array or object, is left to the tree path as a whole (``read(_:ndjson:)`` returns `nil`).
///
/// Members are matched as ``JSONParser`` matches them: unknown names are skipped (validated), and a repeated
/// name keeps its last value. (Byte comparison equals `String` comparison here: no other Unicode text is
/// canonically equivalent to these ASCII names.)
enum LocationBatchReader {
    /// The batch in `body`: read from the bytes, or through the tree path when the reader declines.
    /// - Throws: `empty-body` and `invalid-json` problems, as ``LocationBatch/tree(_:ndjson:)`` does.
    /// - Complexity: O(body size).
    static func batch(_ body: [UInt8], ndjson: Bool) throws(Problem) -> LocationBatch {
        if let batch = read(body, ndjson: ndjson) { return batch }
        return try LocationBatch.tree(body, ndjson: ndjson)
    }

    /// The batch in `body`, or `nil` when the body must go through the tree path: it is not JSON, not an
    /// array or an object, holds no update (NDJSON), or is one object the reader does not decode itself.
    static func read(_ body: [UInt8], ndjson: Bool) -> LocationBatch? {
        body.withUnsafeBytes { raw in ndjson ? readLines(raw) : readDocument(raw) }
    }

    // MARK: - Bodies

    private static func readDocument(_ raw: UnsafeRawBufferPointer) -> LocationBatch? {
        var reader = JSONTokenReader(raw)
        reader.skipByteOrderMark()
        var batch = LocationBatch()
        do throws(JSONTokenReader.SyntaxError) {
            switch reader.peek() {
            case UInt8(ascii: "["):
                guard try reader.enterArray(depth: 0) else { break }
                batch.updates.reserveCapacity(raw.count / 64)
                batch.origins.reserveCapacity(raw.count / 64)
                repeat {
                    _ = reader.peek()
                    let start = reader.offset
                    if let update = try readUpdate(&reader, depth: 1) {
                        batch.append(update)
                    } else {
                        // Valid JSON (the reader validated it) that needs the decoder's verdict.
                        let element = UnsafeRawBufferPointer(rebasing: raw[start..<reader.offset])
                        guard let value = try? JSONParser().parse(element) else { return nil }
                        batch.append(value, at: JSONPath([.index(batch.count)]))
                    }
                } while try reader.nextElement()
            case UInt8(ascii: "{"):
                guard let update = try readUpdate(&reader, depth: 0) else { return nil }
                batch.append(update)
                batch.isSingle = true
            default:
                return nil
            }
            reader.skipWhitespace()
            return reader.isAtEnd ? batch : nil
        } catch {
            return nil
        }
    }

    /// NDJSON: one update per line; `\n` or `\r\n` line ends; lines of only spaces and tabs skipped.
    private static func readLines(_ raw: UnsafeRawBufferPointer) -> LocationBatch? {
        var batch = LocationBatch()
        batch.updates.reserveCapacity(raw.count / 64)
        batch.origins.reserveCapacity(raw.count / 64)
        let count = raw.count
        var lineStart = 0
        var lineNumber = 0
        while lineStart <= count {
            var lineEnd = lineStart
            while lineEnd < count && raw[lineEnd] != 10 { lineEnd += 1 }
            lineNumber += 1
            var end = lineEnd
            if end > lineStart && raw[end - 1] == 13 { end -= 1 }
            var blank = true
            for offset in lineStart..<end where raw[offset] != 32 && raw[offset] != 9 {
                blank = false
                break
            }
            if !blank {
                let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<end])
                if let update = readLine(line) {
                    batch.append(update)
                } else {
                    do throws(JSONParseError) {
                        batch.append(try JSONParser().parse(line), at: JSONPath([.index(batch.count)]))
                    } catch {
                        batch.appendBroken(line: lineNumber, error)
                    }
                }
            }
            lineStart = lineEnd + 1
        }
        return batch.count > 0 ? batch : nil
    }

    /// The update on one NDJSON line, or `nil` when the line needs the tree path.
    private static func readLine(_ line: UnsafeRawBufferPointer) -> LocationUpdate? {
        var reader = JSONTokenReader(line)
        reader.skipByteOrderMark()
        do throws(JSONTokenReader.SyntaxError) {
            guard let update = try readUpdate(&reader, depth: 0) else { return nil }
            reader.skipWhitespace()
            return reader.isAtEnd ? update : nil
        } catch {
            return nil
        }
    }

    // MARK: - One update

    /// Reads the value at the reader's position (nested `depth` levels deep) and returns it as an update,
    /// or `nil` — having read past the value all the same — when ``LocationDecoder`` must judge it.
    static func readUpdate(_ reader: inout JSONTokenReader, depth: Int) throws(JSONTokenReader.SyntaxError) -> LocationUpdate? {
        guard reader.peek() == UInt8(ascii: "{") else {
            try reader.skipValue(depth: depth)
            return nil
        }
        var fields = Fields()
        if try reader.enterObject(depth: depth) {
            repeat {
                let member = try reader.readMemberName(Member.init)
                if member == .other {
                    try reader.skipValue(depth: depth + 1)
                } else {
                    fields[member] = try readScalar(&reader, depth: depth + 1)
                }
            } while try reader.nextMember()
        }
        return fields.update()
    }

    private static func readScalar(_ reader: inout JSONTokenReader, depth: Int) throws(JSONTokenReader.SyntaxError) -> Scalar {
        switch reader.peek() {
        case UInt8(ascii: "\""): return .string(try reader.readString())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try reader.readDouble())
        case UInt8(ascii: "n"):
            try reader.readNull()
            return .null
        default:
            try reader.skipValue(depth: depth)
            return .other
        }
    }

    /// The value of a known member, as far as the common case needs to know it.
    enum Scalar {
        case absent, null, number(Double), string(String), other
    }

    /// The member names ``LocationDecoder`` reads.
    enum Member {
        case deviceId, device, latitude, longitude, time, accuracy, horizontalAccuracy, speed, course, other

        init(_ name: UnsafeBufferPointer<UInt8>) {
            switch name.count {
            case 4: self = Self.equal(name, "time") ? .time : .other
            case 5: self = Self.equal(name, "speed") ? .speed : .other
            case 6: self = Self.equal(name, "device") ? .device : Self.equal(name, "course") ? .course : .other
            case 8:
                self = Self.equal(name, "deviceId") ? .deviceId : Self.equal(name, "latitude") ? .latitude
                    : Self.equal(name, "accuracy") ? .accuracy : .other
            case 9: self = Self.equal(name, "longitude") ? .longitude : .other
            case 18: self = Self.equal(name, "horizontalAccuracy") ? .horizontalAccuracy : .other
            default: self = .other
            }
        }

        @inline(__always) private static func equal(_ name: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
            memcmp(name.baseAddress!, word.utf8Start, word.utf8CodeUnitCount) == 0
        }
    }

    /// The known members of one object (the last value of a repeated name).
    struct Fields {
        var deviceId = Scalar.absent, device = Scalar.absent, latitude = Scalar.absent, longitude = Scalar.absent
        var time = Scalar.absent, accuracy = Scalar.absent, horizontalAccuracy = Scalar.absent
        var speed = Scalar.absent, course = Scalar.absent

        subscript(member: Member) -> Scalar {
            get {
                switch member {
                case .deviceId: deviceId
                case .device: device
                case .latitude: latitude
                case .longitude: longitude
                case .time: time
                case .accuracy: accuracy
                case .horizontalAccuracy: horizontalAccuracy
                case .speed: speed
                case .course: course
                case .other: .other
                }
            }
            set {
                switch member {
                case .deviceId: deviceId = newValue
                case .device: device = newValue
                case .latitude: latitude = newValue
                case .longitude: longitude = newValue
                case .time: time = newValue
                case .accuracy: accuracy = newValue
                case .horizontalAccuracy: horizontalAccuracy = newValue
                case .speed: speed = newValue
                case .course: course = newValue
                case .other: break
                }
            }
        }

        /// The update, when every member is what ``LocationDecoder`` accepts; `nil` otherwise.
        func update() -> LocationUpdate? {
            let deviceValue = if case .absent = self[.deviceId] { self[.device] } else { self[.deviceId] }
            guard case .string(let device) = deviceValue, RequestID.isValid(device),
                  case .number(let latitude) = self[.latitude], latitude >= -90 && latitude <= 90,
                  case .number(let longitude) = self[.longitude], longitude >= -180 && longitude <= 180
            else { return nil }
            let time: Date
            switch self[.time] {
            case .string(let text):
                guard let date = RFC3339.date(from: text) else { return nil }
                time = date
            case .number(let seconds) where seconds.isFinite:
                time = Date(timeIntervalSince1970: seconds)
            default:
                return nil
            }
            guard LocationUpdate.acceptedTimes.contains(time.timeIntervalSince1970) else { return nil }  // LocationDecoder says why
            let accuracyValue = if case .absent = self[.accuracy] { self[.horizontalAccuracy] } else { self[.accuracy] }
            guard let accuracy = Self.optional(accuracyValue), (accuracy.map { $0 >= 0 } ?? true),
                  let speed = Self.optional(self[.speed]), let course = Self.optional(self[.course])
            else { return nil }
            return LocationUpdate(device: DeviceID(device), time: time, latitude: latitude, longitude: longitude,
                                  horizontalAccuracy: accuracy, speed: speed, course: course)
        }

        /// `.some(nil)` for an absent or null member, `.some(x)` for a finite number, `nil` otherwise.
        private static func optional(_ value: Scalar) -> Double?? {
            switch value {
            case .absent, .null: return .some(nil)
            case .number(let number) where number.isFinite: return .some(number)
            default: return nil
            }
        }
    }
}
