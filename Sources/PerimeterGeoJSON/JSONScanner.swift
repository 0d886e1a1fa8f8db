/// The byte-level JSON tokenizer shared by ``JSONParser`` and ``GeoJSONReader``.
///
/// It reads UTF-8 bytes in place (no copy of the input), validates strings strictly (escapes, surrogate pairs,
/// UTF-8), parses numbers with integers exact and doubles correctly rounded, and limits nesting depth.
/// Errors are thrown as ``JSONScanner/Failure`` with the byte offset where they were found.
struct JSONScanner {
    /// A syntax error: what went wrong, and the byte offset where.
    struct Failure: Error {
        var offset: Int
        var message: String
    }

    /// A number token.
    enum Number {
        case integer(Int64)
        case double(Double)
    }

    let base: UnsafePointer<UInt8>
    let count: Int
    let maxDepth: Int
    /// The offset of the next byte to read.
    var index: Int = 0
    /// Scratch bytes for strings with escapes.
    private var scratch: [UInt8] = []

    /// A scanner over `count` bytes at `base`, which must stay valid while the scanner is used.
    init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.base = base
        self.count = count
        self.maxDepth = maxDepth
    }

    // MARK: Bytes

    /// The byte at `index`, or 0 at the end (0 is never valid outside a string).
    @inline(__always) var current: UInt8 { index < count ? base[index] : 0 }

    /// Whether everything has been read.
    @inline(__always) var isAtEnd: Bool { index >= count }

    @inline(__always) mutating func skipWhitespace() {
        while index < count {
            switch base[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    /// Skips whitespace and returns the next byte (0 at the end) without consuming it.
    @inline(__always) mutating func peek() -> UInt8 {
        skipWhitespace()
        return current
    }

    /// A word for what starts at `index`, for messages ("a string", "end of input", …).
    var currentDescription: String {
        guard index < count else { return "end of input" }
        return Self.describe(base[index])
    }

    /// A word for the value a byte starts.
    static func describe(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "{"): "an object"
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "a boolean"
        case UInt8(ascii: "n"): "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): "a number"
        case 0x21...0x7E: "unexpected character '\(Character(Unicode.Scalar(byte)))'"
        default: "unexpected byte 0x" + String(byte, radix: 16, uppercase: true)
        }
    }

    func failure(_ message: String, at offset: Int? = nil) -> Failure {
        Failure(offset: min(offset ?? index, count), message: message)
    }

    /// Consumes `byte` (after whitespace) or throws "expected <what>".
    @inline(__always) mutating func expect(_ byte: UInt8, _ what: String) throws(Failure) {
        if peek() == byte {
            index += 1
        } else {
            throw failure("expected \(what), found \(currentDescription)")
        }
    }

    /// After an element or member: consumes `,` (returns `true`) or `close` (returns `false`).
    @inline(__always) mutating func separator(close: UInt8, in container: String) throws(Failure) -> Bool {
        let byte = peek()
        if byte == UInt8(ascii: ",") { index += 1; return true }
        if byte == close { index += 1; return false }
        throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))' in \(container), found \(currentDescription)")
    }

    /// Consumes `[` or `{` and, if the container is empty, its closing byte; returns `false` for an empty container.
    @inline(__always) mutating func open(_ byte: UInt8, close: UInt8) -> Bool {
        index += 1
        if peek() == close { index += 1; return false }
        return true
    }

    func checkDepth(_ depth: Int) throws(Failure) {
        if depth > maxDepth { throw failure("nesting deeper than \(maxDepth) levels") }
    }

    // MARK: Literals

    mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        let w = word.utf8Start
        var k = 0
        while k < n {
            guard index + k < count, base[index + k] == w[k] else {
                throw failure("invalid literal, expected '\(word)'", at: index)
            }
            k += 1
        }
        index += n
    }

    // MARK: Strings

    /// Reads a string at `index` (which must be `"`).
    mutating func readString() throws(Failure) -> String {
        let open = index
        guard let span = try readStringSpan() else { return try readEscapedString(open: open) }
        return String(decoding: UnsafeBufferPointer(start: base + span.lowerBound, count: span.count), as: UTF8.self)
    }

    /// Reads the string at `index` (which must be `"`) when it has no escapes, returning the offsets of
    /// its bytes (without the quotes); returns `nil`, having consumed nothing, when it has escapes.
    /// Validation and errors are those of ``readString()``.
    @inline(__always)
    mutating func readStringSpan() throws(Failure) -> Range<Int>? {
        let open = index
        var i = index + 1
        var ascii = true
        while i < count {
            let b = base[i]
            if b == UInt8(ascii: "\"") {
                let start = open + 1, length = i - start
                if !ascii, let bad = UTF8Validation.firstInvalidOffset(base + start, count: length) {
                    throw failure("invalid UTF-8 in string", at: start + bad)
                }
                index = i + 1
                return start..<i
            }
            if b == UInt8(ascii: "\\") { return nil }
            if b < 0x20 { throw failure("control character 0x\(String(b, radix: 16)) in string must be escaped", at: i) }
            if b >= 0x80 { ascii = false }
            i += 1
        }
        throw failure("unterminated string", at: open)
    }

    private mutating func readEscapedString(open: Int) throws(Failure) -> String {
        scratch.removeAll(keepingCapacity: true)
        var i = open + 1
        while i < count {
            let b = base[i]
            if b == UInt8(ascii: "\"") {
                index = i + 1
                let valid = scratch.withUnsafeBufferPointer { buffer in
                    guard let start = buffer.baseAddress else { return true }
                    return UTF8Validation.firstInvalidOffset(start, count: buffer.count) == nil
                }
                guard valid else { throw failure("invalid UTF-8 in string", at: open) }
                return String(decoding: scratch, as: UTF8.self)
            }
            if b < 0x20 { throw failure("control character 0x\(String(b, radix: 16)) in string must be escaped", at: i) }
            if b != UInt8(ascii: "\\") { scratch.append(b); i += 1; continue }
            guard i + 1 < count else { break }
            let e = base[i + 1]
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(e)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4(at: i + 2)
                i += 6
                if (0xD800...0xDBFF).contains(scalar) {
                    guard i + 1 < count, base[i] == UInt8(ascii: "\\"), base[i + 1] == UInt8(ascii: "u") else {
                        throw failure("unpaired UTF-16 surrogate in \\u escape", at: i - 6)
                    }
                    let low = try hex4(at: i + 2)
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw failure("unpaired UTF-16 surrogate in \\u escape", at: i - 6)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw failure("unpaired UTF-16 surrogate in \\u escape", at: i - 6)
                }
                // Every remaining value is a valid scalar.
                if let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) {
                    scratch.append(contentsOf: encoded)
                }
                continue
            default:
                throw failure("invalid escape '\\\(Character(Unicode.Scalar(e)))' in string", at: i)
            }
            i += 2
        }
        throw failure("unterminated string", at: open)
    }

    private func hex4(at offset: Int) throws(Failure) -> UInt32 {
        guard offset + 4 <= count else { throw failure("truncated \\u escape", at: offset - 2) }
        var value: UInt32 = 0
        for k in 0..<4 {
            let b = base[offset + k]
            let digit: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = b - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape: expected 4 hex digits", at: offset - 2)
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    // MARK: Skipping

    /// Skips any value (validating it) at the current position.
    mutating func skipValue(depth: Int) throws(Failure) {
        switch peek() {
        case UInt8(ascii: "{"):
            try checkDepth(depth + 1)
            guard open(UInt8(ascii: "{"), close: UInt8(ascii: "}")) else { return }
            repeat {
                guard peek() == UInt8(ascii: "\"") else {
                    throw failure("expected a member name (string) in object, found \(currentDescription)")
                }
                _ = try readString()
                try expect(UInt8(ascii: ":"), "':' after member name")
                try skipValue(depth: depth + 1)
            } while try separator(close: UInt8(ascii: "}"), in: "object")
        case UInt8(ascii: "["):
            try checkDepth(depth + 1)
            guard open(UInt8(ascii: "["), close: UInt8(ascii: "]")) else { return }
            repeat {
                try skipValue(depth: depth + 1)
            } while try separator(close: UInt8(ascii: "]"), in: "array")
        default:
            _ = try readScalar()
        }
    }

    /// Reads a string, number, boolean or null.
    mutating func readScalar() throws(Failure) -> JSONValue {
        switch peek() {
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            switch try readNumber() {
            case .integer(let value): return .integer(value)
            case .double(let value): return .double(value)
            }
        default:
            throw failure("expected a JSON value, found \(currentDescription)")
        }
    }

    // MARK: Values

    /// Reads any value as a ``JSONValue`` tree.
    mutating func readValue(depth: Int) throws(Failure) -> JSONValue {
        switch peek() {
        case UInt8(ascii: "{"):
            return .object(try readObject(depth: depth))
        case UInt8(ascii: "["):
            try checkDepth(depth + 1)
            var elements: [JSONValue] = []
            guard open(UInt8(ascii: "["), close: UInt8(ascii: "]")) else { return .array(elements) }
            repeat {
                elements.append(try readValue(depth: depth + 1))
            } while try separator(close: UInt8(ascii: "]"), in: "array")
            return .array(elements)
        default:
            return try readScalar()
        }
    }

    /// Reads an object's members (a repeated name keeps its last value).
    mutating func readObject(depth: Int) throws(Failure) -> [String: JSONValue] {
        try checkDepth(depth + 1)
        var members: [String: JSONValue] = [:]
        guard open(UInt8(ascii: "{"), close: UInt8(ascii: "}")) else { return members }
        repeat {
            guard peek() == UInt8(ascii: "\"") else {
                throw failure("expected a member name (string) in object, found \(currentDescription)")
            }
            let key = try readString()
            try expect(UInt8(ascii: ":"), "':' after member name")
            members[key] = try readValue(depth: depth + 1)
        } while try separator(close: UInt8(ascii: "}"), in: "object")
        return members
    }
}
