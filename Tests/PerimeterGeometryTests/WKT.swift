import PerimeterGeometry

/// A minimal WKT reader for the test fixtures: POINT, MULTIPOINT, POLYGON, MULTIPOLYGON (2-D,
/// EMPTY allowed anywhere a member may be).
enum WKT {
    /// A parsed geometry: points, or polygons.
    enum Geometry {
        case points([Coordinate])
        case polygons([Polygon])
    }

    /// A parenthesised tree: a coordinate, an EMPTY, or a list of nodes.
    indirect enum Node {
        case coordinate(Coordinate)
        case empty
        case list([Node])
    }

    static func parse(_ text: String) throws -> Geometry {
        var scanner = Scanner(Array(text.uppercased()))
        let keyword = scanner.word()
        let body = try scanner.node()
        switch keyword {
        case "POINT", "MULTIPOINT":
            return .points(try flattenPoints(body))
        case "POLYGON":
            return .polygons(try polygon(body).map { [$0] } ?? [])
        case "MULTIPOLYGON":
            guard case .list(let items) = body else { return .polygons([]) }
            return .polygons(try items.compactMap(polygon))
        default:
            throw TestInputError(description: "unsupported WKT type '\(keyword)' in \(text)")
        }
    }

    static func flattenPoints(_ node: Node) throws -> [Coordinate] {
        switch node {
        case .coordinate(let c): return [c]
        case .empty: return []
        case .list(let items): return try items.flatMap(flattenPoints)
        }
    }

    static func polygon(_ node: Node) throws -> Polygon? {
        guard case .list(let rings) = node else { return nil }
        return Polygon(rings: try rings.map { r in
            guard case .list(let cs) = r else { throw TestInputError(description: "ring expected") }
            return try cs.map { c in
                guard case .coordinate(let v) = c else { throw TestInputError(description: "coordinate expected") }
                return v
            }
        })
    }

    struct Scanner {
        let chars: [Character]
        var i = 0
        init(_ chars: [Character]) { self.chars = chars }

        mutating func skipSpaces() { while i < chars.count, chars[i].isWhitespace { i += 1 } }

        mutating func word() -> String {
            skipSpaces()
            var s = ""
            while i < chars.count, chars[i].isLetter { s.append(chars[i]); i += 1 }
            return s
        }

        mutating func number() throws -> Double {
            skipSpaces()
            var s = ""
            while i < chars.count, chars[i].isNumber || "+-.E".contains(chars[i]) { s.append(chars[i]); i += 1 }
            guard let v = Double(s) else { throw TestInputError(description: "bad number '\(s)' at \(i)") }
            return v
        }

        /// `EMPTY`, `x y`, or `( node, node, … )`.
        mutating func node() throws -> Node {
            skipSpaces()
            guard i < chars.count else { throw TestInputError(description: "unexpected end") }
            if chars[i] == "(" {
                i += 1
                var items: [Node] = []
                while true {
                    items.append(try node())
                    skipSpaces()
                    guard i < chars.count else { throw TestInputError(description: "unclosed (") }
                    if chars[i] == "," { i += 1; continue }
                    if chars[i] == ")" { i += 1; break }
                    throw TestInputError(description: "unexpected '\(chars[i])' at \(i)")
                }
                return .list(items)
            }
            if chars[i].isLetter {
                let w = word()
                guard w == "EMPTY" else { throw TestInputError(description: "unexpected word \(w)") }
                return .empty
            }
            let x = try number(), y = try number()
            return .coordinate(xy(x, y))
        }
    }
}
