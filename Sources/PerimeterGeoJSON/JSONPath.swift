/// A location inside a JSON document, printed in JSONPath style: `$.features[12].geometry.coordinates[0][3][1]`.
public struct JSONPath: Hashable, Sendable, CustomStringConvertible {
    /// One step of a path.
    public enum Component: Hashable, Sendable {
        /// An object member.
        case key(String)
        /// An array element (0-based).
        case index(Int)
    }

    /// The steps from the document root.
    public var components: [Component]

    /// Creates a path; the empty path is the root, `$`.
    public init(_ components: [Component] = []) {
        self.components = components
    }

    /// The path one step further.
    public func appending(_ component: Component) -> JSONPath {
        var path = self
        path.components.append(component)
        return path
    }

    /// The path followed by `other`'s steps.
    public func appending(contentsOf other: JSONPath) -> JSONPath {
        JSONPath(components + other.components)
    }

    /// `$`, then `.key` for identifier-like keys, `['key']` for others, `[n]` for indices.
    public var description: String {
        var text = "$"
        for component in components {
            switch component {
            case .index(let index):
                text += "[\(index)]"
            case .key(let key):
                if Self.isIdentifier(key) {
                    text += "." + key
                } else {
                    text += "['"
                    for character in key {
                        if character == "'" || character == "\\" { text.append("\\") }
                        text.append(character)
                    }
                    text += "']"
                }
            }
        }
        return text
    }

    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return key.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }
}
