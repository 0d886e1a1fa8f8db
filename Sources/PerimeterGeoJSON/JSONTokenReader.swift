/// A forward-only reader of JSON tokens over UTF-8 bytes in memory, for callers that decode one known shape
/// straight from the bytes instead of building a ``JSONValue`` tree first.
///
/// It is ``JSONParser``'s own tokenizer, so a document read to its end with it is accepted or refused
/// exactly as ``JSONParser`` would (strings, escapes, UTF-8, numbers, nesting depth); only the error messages'
/// positions are plain byte offsets. Callers who need ``JSONParser``'s exact error (line, column) parse the
/// same bytes again with it.
///
/// The bytes must stay valid and unchanged while the reader is used.
public struct JSONTokenReader {
    /// A syntax error: what, and the byte offset where.
    public struct SyntaxError: Error, Sendable {
        /// The byte offset from the start of the buffer.
        public var offset: Int
        /// What is wrong.
        public var message: String
    }

    var scanner: JSONScanner

    /// A reader over `buffer`; `maxDepth` limits nesting as ``JSONParser/maxDepth`` does.
    public init(_ buffer: UnsafeRawBufferPointer, maxDepth: Int = 256) {
        // An empty buffer reads as "end of input" everywhere; any valid address will do.
        let base = buffer.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) }
            ?? UnsafePointer<UInt8>(bitPattern: 1)!
        scanner = JSONScanner(base: base, count: buffer.count, maxDepth: maxDepth)
    }

    /// The offset of the next byte to read.
    public var offset: Int { scanner.index }

    /// Whether every byte has been read (call ``skipWhitespace()`` first to allow trailing whitespace).
    public var isAtEnd: Bool { scanner.isAtEnd }

    /// Skips a UTF-8 byte order mark at the very start, as ``JSONParser`` does.
    public mutating func skipByteOrderMark() { scanner.skipByteOrderMark() }

    /// Skips JSON whitespace.
    public mutating func skipWhitespace() { scanner.skipWhitespace() }

    /// Skips whitespace and returns the byte that starts the next token (0 at the end) without consuming it.
    public mutating func peek() -> UInt8 { scanner.peek() }

    /// Consumes the `[` at the current position (see ``peek()``) of an array nested `depth` levels deep
    /// (the document's root is depth 0); returns `false`, having consumed the `]` too, when it is empty.
    public mutating func enterArray(depth: Int) throws(SyntaxError) -> Bool {
        try enter(UInt8(ascii: "["), close: UInt8(ascii: "]"), "an array", depth: depth)
    }

    /// Consumes the `{` at the current position of an object nested `depth` levels deep; returns `false`,
    /// having consumed the `}` too, when it is empty.
    public mutating func enterObject(depth: Int) throws(SyntaxError) -> Bool {
        try enter(UInt8(ascii: "{"), close: UInt8(ascii: "}"), "an object", depth: depth)
    }

    private mutating func enter(_ open: UInt8, close: UInt8, _ what: String, depth: Int) throws(SyntaxError) -> Bool {
        do throws(JSONScanner.Failure) {
            guard scanner.peek() == open else { throw scanner.failure("expected \(what), found \(scanner.currentDescription)") }
            try scanner.checkDepth(depth + 1)
            return scanner.open(open, close: close)
        } catch {
            throw SyntaxError(error)
        }
    }

    /// After an array element: consumes `,` (returns `true`: another element follows) or `]` (returns `false`).
    public mutating func nextElement() throws(SyntaxError) -> Bool {
        do throws(JSONScanner.Failure) {
            return try scanner.separator(close: UInt8(ascii: "]"), in: "array")
        } catch {
            throw SyntaxError(error)
        }
    }

    /// After an object member: consumes `,` (returns `true`: another member follows) or `}` (returns `false`).
    public mutating func nextMember() throws(SyntaxError) -> Bool {
        do throws(JSONScanner.Failure) {
            return try scanner.separator(close: UInt8(ascii: "}"), in: "object")
        } catch {
            throw SyntaxError(error)
        }
    }

    /// Reads a member name and the `:` after it, and returns what `body` makes of the name's UTF-8 bytes
    /// (escapes resolved). A name without escapes is not copied.
    /// - Complexity: O(length of the name).
    public mutating func readMemberName<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) throws(SyntaxError) -> Result {
        do throws(JSONScanner.Failure) {
            guard scanner.peek() == UInt8(ascii: "\"") else {
                throw scanner.failure("expected a member name (string) in object, found \(scanner.currentDescription)")
            }
            let result: Result
            if let span = try scanner.readStringSpan() {
                result = body(UnsafeBufferPointer(start: scanner.base + span.lowerBound, count: span.count))
            } else {
                var name = try scanner.readString()
                result = name.withUTF8(body)
            }
            try scanner.expect(UInt8(ascii: ":"), "':' after member name")
            return result
        } catch {
            throw SyntaxError(error)
        }
    }

    /// Reads the string at the current position.
    public mutating func readString() throws(SyntaxError) -> String {
        do throws(JSONScanner.Failure) {
            guard scanner.peek() == UInt8(ascii: "\"") else {
                throw scanner.failure("expected a string, found \(scanner.currentDescription)")
            }
            return try scanner.readString()
        } catch {
            throw SyntaxError(error)
        }
    }

    /// Reads the number at the current position as a `Double` (integers beyond 2^53 rounded, as
    /// ``JSONValue/doubleValue`` does; magnitudes beyond `Double`'s range give ±infinity).
    public mutating func readDouble() throws(SyntaxError) -> Double {
        do throws(JSONScanner.Failure) {
            return try scanner.readDouble()
        } catch {
            throw SyntaxError(error)
        }
    }

    /// Reads `null`.
    public mutating func readNull() throws(SyntaxError) {
        do throws(JSONScanner.Failure) {
            try scanner.literal("null")
        } catch {
            throw SyntaxError(error)
        }
    }

    /// Skips (and validates) the value at the current position, nested `depth` levels deep.
    public mutating func skipValue(depth: Int) throws(SyntaxError) {
        do throws(JSONScanner.Failure) {
            try scanner.skipValue(depth: depth)
        } catch {
            throw SyntaxError(error)
        }
    }
}

extension JSONTokenReader.SyntaxError {
    init(_ failure: JSONScanner.Failure) {
        self.init(offset: failure.offset, message: failure.message)
    }
}
