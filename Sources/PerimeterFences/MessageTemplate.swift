import Foundation

/// A message such as `Entered {name}` rendered for each event of a fence.
///
/// Placeholders in braces are replaced by values the caller supplies (the event's `event`, `time`,
/// `device`, and the fence's `id`, `name` and properties). An unknown placeholder renders as empty text;
/// `{{` and `}}` render literal braces. Parsing never fails: an unclosed `{` is kept as text.
public struct MessageTemplate: Hashable, Sendable, CustomStringConvertible {
    enum Part: Hashable, Sendable {
        case text(String)
        case placeholder(String)
    }

    /// The template as written.
    public let source: String
    let parts: [Part]

    /// Parses a template.
    public init(_ source: String) {
        self.source = source
        var parts: [Part] = []
        var text = ""
        var index = source.startIndex
        while index < source.endIndex {
            let character = source[index]
            let next = source.index(after: index)
            if character == "{", next < source.endIndex, source[next] == "{" {
                text.append("{")
                index = source.index(after: next)
            } else if character == "}", next < source.endIndex, source[next] == "}" {
                text.append("}")
                index = source.index(after: next)
            } else if character == "{", let close = source[next...].firstIndex(of: "}") {
                if !text.isEmpty { parts.append(.text(text)); text = "" }
                let name = source[next..<close].trimmingCharacters(in: .whitespaces)
                parts.append(.placeholder(String(name)))
                index = source.index(after: close)
            } else {
                text.append(character)
                index = next
            }
        }
        if !text.isEmpty { parts.append(.text(text)) }
        self.parts = parts
    }

    /// The placeholder names the template uses, in order of appearance.
    public var placeholders: [String] {
        parts.compactMap { if case .placeholder(let name) = $0 { name } else { nil } }
    }

    /// Renders the template, asking `value` for each placeholder (nil renders as empty text).
    public func render(_ value: (String) -> String?) -> String {
        var result = ""
        for part in parts {
            switch part {
            case .text(let text): result += text
            case .placeholder(let name): result += value(name) ?? ""
            }
        }
        return result
    }

    public var description: String { source }
}
