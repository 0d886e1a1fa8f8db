/// Writes compact, deterministic JSON text (RFC 8259) for ``JSONValue`` and the ``GeoJSON`` model.
///
/// - Object keys are sorted (by UTF-8 bytes) unless ``Options/sortedKeys`` is off; GeoJSON members are always
///   written in a fixed order (`type`, `id`, `bbox`, `geometry`/`coordinates`/`geometries`/`features`, `properties`).
/// - Strings: `"` and `\` escaped, control characters as `\b \f \n \r \t` or `\u00XX`, everything else raw UTF-8.
/// - Integers exactly; doubles as the shortest text that reads back to the same value (Swift's `description`,
///   e.g. `0.1`, `100.0`, `1e-05`), so a double stays a double through ``JSONParser``.
/// - Negative zero is written `0.0`. NaN and infinities, which JSON cannot express, are written `null`.
public struct JSONWriter: Sendable {
    /// Output choices.
    public struct Options: Sendable {
        /// Whether object keys are written in sorted order (deterministic output). Default `true`.
        public var sortedKeys: Bool

        /// Creates options.
        public init(sortedKeys: Bool = true) {
            self.sortedKeys = sortedKeys
        }
    }

    /// The choices in use.
    public var options: Options

    /// Creates a writer.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// The JSON text of a double, or `nil` for NaN and infinities. Negative zero gives `0.0`.
    public static func format(_ value: Double) -> String? {
        guard value.isFinite else { return nil }
        return value == 0 ? "0.0" : value.description
    }

    /// Appends the JSON text of `value` to `output`.
    /// - Complexity: O(size of the value), plus O(k log k) per object of k keys when sorting.
    public func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "true" : "false").utf8)
        case .integer(let number): output.append(contentsOf: String(number).utf8)
        case .double(let number): writeNumber(number, into: &output)
        case .string(let text): writeString(text, into: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (k, element) in elements.enumerated() {
                if k > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            writeObject(members, into: &output)
        }
    }

    /// The JSON text of `value`.
    public func string(_ value: JSONValue) -> String {
        var output: [UInt8] = []
        write(value, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    func writeObject(_ members: [String: JSONValue], into output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        var first = true
        func member(_ key: String, _ value: JSONValue) {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            writeString(key, into: &output)
            output.append(UInt8(ascii: ":"))
            write(value, into: &output)
        }
        if options.sortedKeys {
            for key in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                if let value = members[key] { member(key, value) }
            }
        } else {
            for (key, value) in members { member(key, value) }
        }
        output.append(UInt8(ascii: "}"))
    }

    func writeNumber(_ value: Double, into output: inout [UInt8]) {
        if Self.appendShortDecimal(value, to: &output) { return }
        output.append(contentsOf: (Self.format(value) ?? "null").utf8)
    }

    /// Appends ``format(_:)``'s text of `value` without making a `String`, when `value` is a decimal of at
    /// most 7 fractional digits between 0.001 and 10⁸ in magnitude (coordinates as GeoJSON files write them);
    /// returns `false`, having appended nothing, for any other value.
    ///
    /// Why it is the same text: with n = |value|·10⁷ rounded to an integer (exact below 2⁵³), the division
    /// n / 10⁷ is correctly rounded, so when it gives back |value| the decimal n·10⁻⁷ reads as `value`. Two
    /// decimals of at most 7 fractional digits differ by at least 10⁻⁷, more than the ulp below 10⁸, so no
    /// other such decimal reads as `value`, and any decimal with fewer significant digits would be one: the
    /// digits of n without trailing zeros are the shortest that read back, which `description` writes in
    /// this range as plain decimals with at least one fractional digit (`100.0`, `0.001`).
    /// - Complexity: O(1); no allocation beyond `output`'s growth.
    @inline(__always)
    static func appendShortDecimal(_ value: Double, to output: inout [UInt8]) -> Bool {
        let magnitude = Swift.abs(value)
        guard magnitude >= 0.001, magnitude < 1e8 else { return false }  // false for NaN too
        let scaled = (magnitude * 1e7).rounded()
        guard scaled / 1e7 == magnitude else { return false }
        let n = UInt64(scaled)
        if value < 0 { output.append(UInt8(ascii: "-")) }
        appendDigits(n / 10_000_000, minimumWidth: 1, to: &output)
        output.append(UInt8(ascii: "."))
        var fraction = n % 10_000_000, width = 7
        while width > 1, fraction % 10 == 0 { fraction /= 10; width -= 1 }
        appendDigits(fraction, minimumWidth: width, to: &output)
        return true
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20:
                let hex = Self.hexDigits
                output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                           hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
