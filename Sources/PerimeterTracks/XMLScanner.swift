/// A small XML pull scanner, enough for GPX: XML declaration, BOM, comments, CDATA, DOCTYPE (skipped),
/// processing instructions, the five named entities and numeric character references, namespace
/// prefixes (reported as local names), self-closing tags, attributes in either quote.
///
/// It checks that tags nest and close, and throws ``TrackProblem`` naming the line otherwise.
struct XMLScanner {
    /// One step of the document.
    enum Event {
        /// A start tag: local name, attributes (local names, decoded values), self-closing, byte offset of `<`.
        case start(name: String, attributes: [(name: String, value: String)], selfClosing: Bool, offset: Int)
        /// An end tag (local name).
        case end(name: String)
        /// Character data between tags (raw byte range, entities not yet decoded).
        case text(Range<Int>)
        /// A CDATA section's content (taken literally).
        case cdata(Range<Int>)
    }

    let bytes: [UInt8]
    let source: String
    private(set) var index = 0
    private(set) var locator: LineLocator
    /// Open elements: qualified name and offset of their `<`.
    private(set) var stack: [(name: String, offset: Int)] = []
    private var sawRoot = false

    init(bytes: [UInt8], source: String) {
        self.bytes = bytes
        self.source = source
        self.locator = LineLocator(bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    /// The depth of open elements.
    var depth: Int { stack.count }

    /// Line and column of a byte offset (amortised O(1) for increasing offsets).
    mutating func position(of offset: Int) -> (line: Int, column: Int) { locator.position(of: offset) }

    /// A problem at a byte offset.
    mutating func problem(at offset: Int, _ message: String) -> TrackProblem {
        let p = locator.position(of: offset)
        return TrackProblem(source: source, line: p.line, column: p.column, message: message)
    }

    /// The next event, or `nil` at the end of a well-formed document.
    /// - Complexity: O(bytes consumed).
    mutating func next() throws -> Event? {
        let count = bytes.count
        while index < count {
            if bytes[index] != 0x3C {
                let start = index
                while index < count, bytes[index] != 0x3C { index += 1 }
                if stack.isEmpty {
                    if let junk = bytes[start..<index].firstIndex(where: { !Self.isSpace($0) }) {
                        throw problem(at: junk, sawRoot ? "text after the end of the root element" : "text before the root element: this is not XML")
                    }
                    continue
                }
                return .text(start..<index)
            }
            let open = index
            if matches("<!--", at: index) {
                guard let end = find("-->", from: index + 4) else { throw problem(at: open, "comment <!-- is never closed") }
                index = end + 3
                continue
            }
            if matches("<![CDATA[", at: index) {
                guard let end = find("]]>", from: index + 9) else { throw problem(at: open, "<![CDATA[ section is never closed") }
                guard !stack.isEmpty else { throw problem(at: open, "CDATA outside the root element") }
                index = end + 3
                return .cdata((open + 9)..<end)
            }
            if matches("<?", at: index) {
                guard let end = find("?>", from: index + 2) else { throw problem(at: open, "processing instruction <? is never closed") }
                index = end + 2
                continue
            }
            if matches("<!", at: index) {
                // DOCTYPE or other declaration: skip to the matching '>' (internal subset in brackets).
                var bracket = 0
                index += 2
                while index < count {
                    let c = bytes[index]
                    if c == 0x5B { bracket += 1 } else if c == 0x5D { bracket -= 1 } else if c == 0x3E, bracket <= 0 { break }
                    index += 1
                }
                guard index < count else { throw problem(at: open, "declaration <! is never closed") }
                index += 1
                continue
            }
            if index + 1 < count, bytes[index + 1] == 0x2F {
                index += 2
                let name = try readName(tagOffset: open)
                skipSpace()
                guard index < count, bytes[index] == 0x3E else { throw problem(at: open, "end tag </\(name) is not closed with '>'") }
                index += 1
                guard let top = stack.last else { throw problem(at: open, "end tag </\(name)> without a start tag") }
                guard top.name == name else {
                    let opened = locator.position(of: top.offset).line
                    throw problem(at: open, "end tag </\(name)> does not match <\(top.name)> opened at line \(opened)")
                }
                stack.removeLast()
                return .end(name: Self.localName(name))
            }
            index += 1
            let name = try readName(tagOffset: open)
            var attributes: [(name: String, value: String)] = []
            var selfClosing = false
            while true {
                skipSpace()
                guard index < count else { throw problem(at: open, "tag <\(name) is never closed with '>'") }
                let c = bytes[index]
                if c == 0x3E { index += 1; break }
                if c == 0x2F {
                    guard index + 1 < count, bytes[index + 1] == 0x3E else { throw problem(at: index, "'/' in tag <\(name)> not followed by '>'") }
                    index += 2
                    selfClosing = true
                    break
                }
                let attributeOffset = index
                let attributeName = try readName(tagOffset: open)
                skipSpace()
                guard index < count, bytes[index] == 0x3D else {
                    throw problem(at: attributeOffset, "attribute \(attributeName) of <\(name)> has no '=' and value")
                }
                index += 1
                skipSpace()
                guard index < count, bytes[index] == 0x22 || bytes[index] == 0x27 else {
                    throw problem(at: attributeOffset, "attribute \(attributeName) of <\(name)> has no quoted value")
                }
                let quote = bytes[index]
                let valueStart = index + 1
                guard let valueEnd = bytes[valueStart...].firstIndex(of: quote) else {
                    throw problem(at: attributeOffset, "value of attribute \(attributeName) of <\(name)> is never closed")
                }
                index = valueEnd + 1
                let value = try decode(valueStart..<valueEnd)
                attributes.append((Self.localName(attributeName), value))
            }
            if stack.isEmpty, sawRoot { throw problem(at: open, "a second root element <\(name)> after the first one ended") }
            sawRoot = true
            if !selfClosing { stack.append((name, open)) }
            return .start(name: Self.localName(name), attributes: attributes, selfClosing: selfClosing, offset: open)
        }
        if let top = stack.last {
            let opened = locator.position(of: top.offset)
            throw TrackProblem(source: source, line: opened.line, column: opened.column,
                               message: "<\(top.name)> opened here is never closed: the file ends first (truncated?)")
        }
        guard sawRoot else { throw TrackProblem(source: source, message: "no XML element in the file") }
        return nil
    }

    /// Decodes character data in `range`: entities and character references become characters.
    /// - Throws: ``TrackProblem`` for an unknown entity or invalid character reference.
    mutating func decode(_ range: Range<Int>) throws -> String {
        guard bytes[range].contains(0x26) else { return String(decoding: bytes[range], as: UTF8.self) }
        var out = [UInt8]()
        out.reserveCapacity(range.count)
        var i = range.lowerBound
        while i < range.upperBound {
            let c = bytes[i]
            guard c == 0x26 else { out.append(c); i += 1; continue }
            guard let semicolon = bytes[i..<min(range.upperBound, i + 12)].firstIndex(of: 0x3B) else {
                throw problem(at: i, "'&' not followed by an entity name and ';' (write &amp; for a literal &)")
            }
            let name = String(decoding: bytes[(i + 1)..<semicolon], as: UTF8.self)
            switch name {
            case "lt": out.append(0x3C)
            case "gt": out.append(0x3E)
            case "amp": out.append(0x26)
            case "quot": out.append(0x22)
            case "apos": out.append(0x27)
            default:
                var scalar: Unicode.Scalar?
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    scalar = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                } else if name.hasPrefix("#") {
                    scalar = UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                } else {
                    throw problem(at: i, "unknown entity &\(name);")
                }
                guard let scalar, scalar.value != 0 else { throw problem(at: i, "&\(name); is not a valid character reference") }
                out.append(contentsOf: Array(String(Character(scalar)).utf8))
            }
            i = semicolon + 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Helpers

    private mutating func readName(tagOffset: Int) throws -> String {
        let start = index
        while index < bytes.count {
            let c = bytes[index]
            if Self.isSpace(c) || c == 0x3E || c == 0x2F || c == 0x3D || c == 0x3C || c == 0x22 || c == 0x27 { break }
            index += 1
        }
        guard index > start else {
            if index >= bytes.count { throw problem(at: tagOffset, "tag is never closed: the file ends inside it") }
            throw problem(at: index, "expected a name in the tag, found '\(Character(Unicode.Scalar(bytes[index])))'")
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func skipSpace() {
        while index < bytes.count, Self.isSpace(bytes[index]) { index += 1 }
    }

    private func matches(_ literal: StaticString, at offset: Int) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard offset + count <= bytes.count else { return false }
        let pointer = literal.utf8Start
        for k in 0..<count where bytes[offset + k] != pointer[k] { return false }
        return true
    }

    private func find(_ literal: StaticString, from offset: Int) -> Int? {
        let first = literal.utf8Start[0]
        var i = offset
        while i < bytes.count {
            if bytes[i] == first, matches(literal, at: i) { return i }
            i += 1
        }
        return nil
    }

    static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }

    /// The part of a qualified name after its prefix (`gpx:trkpt` → `trkpt`).
    static func localName(_ name: String) -> String {
        guard let colon = name.lastIndex(of: ":") else { return name }
        return String(name[name.index(after: colon)...])
    }
}
