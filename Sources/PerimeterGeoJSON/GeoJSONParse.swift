/// One read by ``GeoJSONReader``: the scanner, the problems found so far, and where the parse is.
struct GeoJSONParse {
    /// A problem before its line and column are known.
    struct Pending {
        var severity: GeoJSONProblem.Severity
        var message: String
        var path: [JSONPath.Component]
        var featureIndex: Int?
        var featureID: GeoJSON.FeatureID?
        var offset: Int
    }

    /// The member names the reader acts on.
    enum Member {
        case type, coordinates, geometries, bbox, id, geometry, properties, features, other
    }

    /// The `"type"` member of an object, looked up before the object is parsed.
    enum TypeMember {
        case missing
        case notString(String)
        case name(String)
    }

    var s: JSONScanner
    let maxProblems: Int
    var pending: [Pending] = []
    var unlisted = 0
    /// The path of the value being parsed (coordinate indices are added only when a problem is reported).
    var path: [JSONPath.Component] = []
    var featureIndex: Int?
    /// Input positions of the features kept in the collection being read.
    var keptFeatureIndices: [Int] = []
    /// Where in the input each kept feature's object is, `{` to `}`.
    var keptFeatureRanges: [Range<Int>] = []
    /// Scratch for the positions of the innermost coordinate array being read.
    let scratch = PositionBuffer()
    /// Whether every position of the geometry being read is two numbers within ±180 and ±90, so that
    /// its validation need not look at each position again (the common case, checked as it is read).
    var positionsInRange = true

    init(base: UnsafePointer<UInt8>, count: Int, options: GeoJSONReader.Options) {
        s = JSONScanner(base: base, count: count, maxDepth: max(1, options.maxDepth))
        maxProblems = max(1, options.maxProblems)
    }

    // MARK: Problems

    mutating func report(_ severity: GeoJSONProblem.Severity, _ message: String, at offset: Int,
                         extra: [JSONPath.Component] = []) {
        guard pending.count < maxProblems else { unlisted += 1; return }
        pending.append(Pending(severity: severity, message: message, path: path + extra, featureIndex: featureIndex,
                               featureID: nil, offset: min(offset, s.count)))
    }

    /// Reports an error about the value at the current position, then skips that value.
    mutating func rejectValue(_ message: String, depth: Int, extra: [JSONPath.Component] = []) throws(JSONScanner.Failure) {
        report(.error, message, at: s.index, extra: extra)
        try s.skipValue(depth: depth)
    }

    // MARK: Top level

    mutating func run() -> GeoJSONReadResult {
        var object: GeoJSON.Object?
        s.skipByteOrderMark()
        do throws(JSONScanner.Failure) {
            object = try readTopLevel()
            s.skipWhitespace()
            if !s.isAtEnd { throw s.failure("expected end of input after the GeoJSON object, found \(s.currentDescription)") }
        } catch {
            object = nil
            // The path and feature index still say where the parse was.
            report(.error, error.message, at: error.offset)
        }
        if unlisted > 0 {
            pending.append(Pending(severity: pending.contains { $0.severity == .error } ? .error : .warning,
                                   message: "\(unlisted) more problems not listed", path: [], featureIndex: nil,
                                   featureID: nil, offset: s.count))
        }
        return GeoJSONReadResult(object: object, problems: finishedProblems(), featureIndices: keptFeatureIndices,
                                 featureByteRanges: keptFeatureRanges)
    }

    private func finishedProblems() -> [GeoJSONProblem] {
        let positions = TextPosition.lineColumns(of: pending.map(\.offset), in: s.base, count: s.count)
        var problems = zip(pending, positions).map { item, position in
            GeoJSONProblem(severity: item.severity, message: item.message, path: JSONPath(item.path),
                           featureIndex: item.featureIndex, featureID: item.featureID, offset: item.offset,
                           line: position.line, column: position.column)
        }
        // Stable: problems at one offset keep the order in which they were found.
        problems = problems.enumerated().sorted { ($0.element.offset, $0.offset) < ($1.element.offset, $1.offset) }
            .map(\.element)
        return problems
    }

    private mutating func readTopLevel() throws(JSONScanner.Failure) -> GeoJSON.Object? {
        guard s.peek() == UInt8(ascii: "{") else {
            throw s.failure("expected a GeoJSON object, found \(s.currentDescription)")
        }
        switch try peekType() {
        case .name("FeatureCollection"):
            return .featureCollection(try readFeatureCollection())
        case .name("Feature"):
            featureIndex = 0
            return try readFeature(depth: 0).map { .feature($0) }
        case .name(let name) where GeoJSON.Geometry.typeNames.contains(name):
            return try readGeometry(depth: 0).map { .geometry($0) }
        case .name(let name):
            try rejectValue("unknown GeoJSON type \"\(name)\"", depth: 0, extra: [.key("type")])
        case .notString(let found):
            try rejectValue("\"type\" must be a string, found \(found)", depth: 0, extra: [.key("type")])
        case .missing:
            try rejectValue("GeoJSON object has no \"type\" member", depth: 0)
        }
        return nil
    }

    // MARK: Members

    /// Reads a member name and the `:` after it.
    mutating func readMember() throws(JSONScanner.Failure) -> Member {
        guard s.peek() == UInt8(ascii: "\"") else {
            throw s.failure("expected a member name (string) in object, found \(s.currentDescription)")
        }
        let start = s.index + 1
        var end = start
        var plain = true
        while end < s.count {
            let b = s.base[end]
            if b == UInt8(ascii: "\"") { break }
            if b == UInt8(ascii: "\\") || b >= 0x80 || b < 0x20 { plain = false; break }
            end += 1
        }
        let member: Member
        if plain && end < s.count {
            s.index = end + 1
            member = Self.member(s.base + start, end - start)
        } else {
            let name = try s.readString()
            member = Array(name.utf8).withUnsafeBufferPointer { buffer in
                guard let p = buffer.baseAddress else { return .other }
                return Self.member(p, buffer.count)
            }
        }
        try s.expect(UInt8(ascii: ":"), "':' after member name")
        return member
    }

    private static func member(_ p: UnsafePointer<UInt8>, _ n: Int) -> Member {
        @inline(__always) func equals(_ word: StaticString) -> Bool {
            guard word.utf8CodeUnitCount == n else { return false }
            let w = word.utf8Start
            for k in 0..<n where p[k] != w[k] { return false }
            return true
        }
        switch n {
        case 2: return equals("id") ? .id : .other
        case 4: return equals("type") ? .type : equals("bbox") ? .bbox : .other
        case 8: return equals("geometry") ? .geometry : equals("features") ? .features : .other
        case 10: return equals("properties") ? .properties : equals("geometries") ? .geometries : .other
        case 11: return equals("coordinates") ? .coordinates : .other
        default: return .other
        }
    }

    /// The `"type"` member of the object at the current position, without consuming anything.
    mutating func peekType() throws(JSONScanner.Failure) -> TypeMember {
        let saved = s.index
        defer { s.index = saved }
        guard s.open(UInt8(ascii: "{"), close: UInt8(ascii: "}")) else { return .missing }
        repeat {
            if try readMember() == .type {
                guard s.peek() == UInt8(ascii: "\"") else { return .notString(s.currentDescription) }
                return .name(try s.readString())
            }
            try s.skipValue(depth: 1)
        } while try s.separator(close: UInt8(ascii: "}"), in: "object")
        return .missing
    }

    /// Calls `body` for each member of the object at the current position (which must be `{`).
    @inline(__always)
    mutating func forEachMember(_ body: (inout GeoJSONParse, Member) throws(JSONScanner.Failure) -> Void)
        throws(JSONScanner.Failure) {
        guard s.open(UInt8(ascii: "{"), close: UInt8(ascii: "}")) else { return }
        repeat {
            let member = try readMember()
            try body(&self, member)
        } while try s.separator(close: UInt8(ascii: "}"), in: "object")
    }

    /// The offset of the value at `relative` below the object starting at `objectStart` (for validation issues).
    func locate(_ relative: [JSONPath.Component], from objectStart: Int) -> Int {
        var t = s
        t.index = objectStart
        do {
            for component in relative {
                switch component {
                case .key(let key):
                    guard t.peek() == UInt8(ascii: "{"), t.open(UInt8(ascii: "{"), close: UInt8(ascii: "}")) else {
                        return t.index
                    }
                    while true {
                        guard t.peek() == UInt8(ascii: "\"") else { return objectStart }
                        let name = try t.readString()
                        try t.expect(UInt8(ascii: ":"), "':'")
                        if name == key { break }
                        try t.skipValue(depth: 0)
                        guard try t.separator(close: UInt8(ascii: "}"), in: "object") else { return objectStart }
                    }
                case .index(let index):
                    guard t.peek() == UInt8(ascii: "["), t.open(UInt8(ascii: "["), close: UInt8(ascii: "]")) else {
                        return t.index
                    }
                    for _ in 0..<index {
                        try t.skipValue(depth: 0)
                        guard try t.separator(close: UInt8(ascii: "]"), in: "array") else { return objectStart }
                    }
                }
            }
            t.skipWhitespace()
            return t.index
        } catch {
            return objectStart
        }
    }
}
