/// A syntax error found by ``JSONParser``: what, and where (byte offset, 1-based line and column).
public struct JSONParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The byte offset in the input.
    public var offset: Int
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, in Unicode scalars.
    public var column: Int

    /// Creates an error.
    public init(message: String, offset: Int, line: Int, column: Int) {
        self.message = message
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// `line:column: message`.
    public var description: String { "\(line):\(column): \(message)" }
}

/// A strict RFC 8259 JSON parser producing ``JSONValue`` trees (for NDJSON lines, API payloads, properties).
///
/// It shares its tokenizer with ``GeoJSONReader``: integers exact, doubles correctly rounded, strings validated
/// (escapes, surrogate pairs, UTF-8), nesting limited to `maxDepth`. A leading UTF-8 byte order mark is skipped.
public struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted.
    public var maxDepth: Int

    /// Creates a parser.
    public init(maxDepth: Int = 256) {
        self.maxDepth = maxDepth
    }

    /// Parses one JSON value (surrounded by optional whitespace) from UTF-8 bytes.
    /// - Complexity: O(n).
    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBytes { parseResult($0) }
        return try result.get()
    }

    /// Parses one JSON value from a string.
    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Parses one JSON value from UTF-8 bytes in memory.
    public func parse(_ buffer: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        try parseResult(buffer).get()
    }

    private func parseResult(_ buffer: UnsafeRawBufferPointer) -> Result<JSONValue, JSONParseError> {
        guard let start = buffer.baseAddress, buffer.count > 0 else {
            return .failure(JSONParseError(message: "expected a JSON value, found end of input", offset: 0, line: 1, column: 1))
        }
        let base = start.assumingMemoryBound(to: UInt8.self)
        var scanner = JSONScanner(base: base, count: buffer.count, maxDepth: maxDepth)
        scanner.skipByteOrderMark()
        do throws(JSONScanner.Failure) {
            let value = try scanner.readValue(depth: 0)
            scanner.skipWhitespace()
            guard scanner.isAtEnd else { throw scanner.failure("expected end of input after the JSON value, found \(scanner.currentDescription)") }
            return .success(value)
        } catch {
            let position = TextPosition.lineColumns(of: [error.offset], in: base, count: buffer.count)[0]
            return .failure(JSONParseError(message: error.message, offset: error.offset,
                                           line: position.line, column: position.column))
        }
    }
}

extension JSONScanner {
    /// Skips a UTF-8 byte order mark at the very start.
    mutating func skipByteOrderMark() {
        if index == 0, count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { index = 3 }
    }
}
