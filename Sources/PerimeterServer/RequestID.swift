import PerimeterGeoJSON

/// The rule for ids a request names — fence, device, simulation and webhook ids, in paths and bodies:
/// printable text of 1…256 UTF-8 bytes. Control characters (U+0000–U+001F, U+007F–U+009F, NUL
/// included) and line or paragraph separators (U+2028, U+2029) are refused: they break logs, headers
/// and terminals that show the id.
enum RequestID {
    /// The longest id, in UTF-8 bytes.
    static let maximumBytes = 256
    /// How much of an id a message quotes (``excerpt(_:)``).
    static let excerptLength = 32

    /// What is wrong with `id` as an id named `name` (`deviceId`, `id`), or `nil` when it is valid.
    static func violation(_ id: String, name: String) -> String? {
        let bytes = id.utf8.count
        if bytes == 0 { return "\(name) must not be empty" }
        if bytes > maximumBytes {
            return "\(name) is \(bytes) bytes long; an id has at most \(maximumBytes) bytes (UTF-8)"
        }
        for (offset, scalar) in id.unicodeScalars.enumerated() where isForbidden(scalar) {
            let code = String(scalar.value, radix: 16, uppercase: true)
            return "\(name) contains the control character U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code) at character \(offset); an id must be printable text"
        }
        return nil
    }

    /// Whether `id` is a valid id (the fast check of the ingest path: ASCII ids are checked byte by byte).
    static func isValid(_ id: String) -> Bool {
        var count = 0, ascii = true
        for byte in id.utf8 {
            count += 1
            if byte < 0x20 || byte == 0x7F { return false }
            if byte >= 0x80 { ascii = false }
        }
        guard count > 0, count <= maximumBytes else { return false }
        return ascii || !id.unicodeScalars.contains(where: isForbidden)
    }

    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: true
        default: false
        }
    }

    /// The problem for an invalid id in the path (400, naming the parameter).
    static func pathProblem(_ violation: String, parameter: String) -> Problem {
        Problem(400, "invalid-id", title: "Invalid id",
                detail: "the path parameter \(violation)", extra: ["parameter": .string(parameter)])
    }

    /// The problem for an invalid id in the body (422, pointing at it).
    static func bodyProblem(_ violation: String, at path: JSONPath) -> Problem {
        Problem(422, "invalid-id", title: "Invalid id", detail: "\(path): \(violation)", pointer: path.jsonPointer,
                extra: ["path": .string(path.description)])
    }

    /// `text` when short, else its first ``excerptLength`` characters and `…`: how much of an id (or a
    /// path) a problem quotes.
    static func excerpt(_ text: String, length: Int = excerptLength) -> String {
        text.count <= length ? text : String(text.prefix(length)) + "…"
    }
}
