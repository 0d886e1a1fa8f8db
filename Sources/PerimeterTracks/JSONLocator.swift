import PerimeterGeoJSON

/// One step of a path into a JSON document: an object member or an array element.
enum JSONStep: Hashable {
    case key(String)
    case index(Int)
}

/// Finds where values sit in a JSON text, so that problems found in a parsed ``JSONValue`` tree (which
/// keeps no positions) can name a line and column.
///
/// All paths are looked up together in one forward pass that descends only along the paths asked for and
/// skips everything else. The text is expected to be valid JSON (it was parsed before); on anything
/// unexpected the walk stops and the paths not yet found stay `nil`. For a duplicated member name the
/// last occurrence counts, as in ``JSONParser``.
enum JSONLocator {
    /// The byte offset where the value at each path starts (`nil` where the path leads nowhere).
    /// The empty path is the top-level value.
    /// - Complexity: O(n) in the text size, plus O(total path length).
    static func offsets(of paths: [[JSONStep]], in bytes: [UInt8]) -> [Int?] {
        guard !paths.isEmpty else { return [] }
        var trie = [Node()]
        for (target, path) in paths.enumerated() {
            var node = 0
            for step in path {
                if let child = trie[node].children[step] {
                    node = child
                } else {
                    trie.append(Node())
                    trie[node].children[step] = trie.count - 1
                    node = trie.count - 1
                }
            }
            trie[node].targets.append(target)
        }
        var walker = Walker(bytes: bytes, trie: trie, found: [Int?](repeating: nil, count: paths.count))
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { walker.index = 3 }
        walker.walk(node: 0)
        return walker.found
    }

    /// A node of the path trie: the paths ending here, and the steps leading on.
    private struct Node {
        var children: [JSONStep: Int] = [:]
        var targets: [Int] = []
    }

    private struct Walker {
        let bytes: [UInt8]
        let trie: [Node]
        var found: [Int?]
        var index = 0
        var failed = false

        /// The byte at `index`, or 0 past the end (0 is never valid JSON outside a string).
        var current: UInt8 { index < bytes.count ? bytes[index] : 0 }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        /// Walks the value at `index`, recording the targets of `node` and descending into its children.
        /// Recursion depth is bounded by the longest path.
        mutating func walk(node: Int) {
            skipWhitespace()
            for target in trie[node].targets { found[target] = index }
            let children = trie[node].children
            guard !children.isEmpty else { skipValue(); return }
            switch current {
            case UInt8(ascii: "{"):
                index += 1
                skipWhitespace()
                if current == UInt8(ascii: "}") { index += 1; return }
                while !failed {
                    skipWhitespace()
                    guard current == UInt8(ascii: "\"") else { failed = true; return }
                    let key = readKey()
                    skipWhitespace()
                    guard current == UInt8(ascii: ":") else { failed = true; return }
                    index += 1
                    if let child = children[.key(key)] { walk(node: child) } else { skipValue() }
                    if !closeOrContinue(UInt8(ascii: "}")) { return }
                }
            case UInt8(ascii: "["):
                index += 1
                skipWhitespace()
                if current == UInt8(ascii: "]") { index += 1; return }
                var element = 0
                while !failed {
                    if let child = children[.index(element)] { walk(node: child) } else { skipValue() }
                    element += 1
                    if !closeOrContinue(UInt8(ascii: "]")) { return }
                }
            default:
                skipValue()
            }
        }

        /// After a member or element: `true` after a `,`, `false` after `close` (or on anything else, which fails the walk).
        mutating func closeOrContinue(_ close: UInt8) -> Bool {
            guard !failed else { return false }
            skipWhitespace()
            if current == UInt8(ascii: ",") { index += 1; return true }
            if current == close { index += 1 } else { failed = true }
            return false
        }

        /// A member name at `index` (which is `"`), decoded.
        mutating func readKey() -> String {
            let start = index
            skipString()
            let end = index
            guard end - start >= 2 else { failed = true; return "" }
            let raw = bytes[(start + 1)..<(end - 1)]
            if !raw.contains(UInt8(ascii: "\\")) { return String(decoding: raw, as: UTF8.self) }
            return (try? JSONParser().parse(Array(bytes[start..<end])))?.stringValue ?? ""
        }

        /// Skips a string at `index` (which is `"`).
        mutating func skipString() {
            index += 1
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""): index += 1; return
                default: index += 1
                }
            }
            index = min(index, bytes.count)
        }

        /// Skips any value at `index` (after white space).
        mutating func skipValue() {
            skipWhitespace()
            switch current {
            case UInt8(ascii: "\""):
                skipString()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        skipString()
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { index += 1; return }
                    default:
                        break
                    }
                    index += 1
                }
            case 0:
                failed = true
            default:
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), 0x20, 0x0A, 0x0D, 0x09: return
                    default: index += 1
                    }
                }
            }
        }
    }
}
