/// An event or visit id as the engine makes it — 128 bits, shown as 32 lower-case hex digits — or any
/// other text as given (stores and tests may carry ids of their own).
///
/// The engine keeps the bits and writes the digits only when the id is read: most events of a busy
/// engine are counted, filtered or dropped without their id being looked at, and formatting two ids
/// per event (two heap strings) was a large part of an entry's or exit's cost. The form is canonical
/// — text that is 32 lower-case hex digits is always kept as bits — so two identifiers are equal
/// exactly when their texts are.
enum EventIdentifier: Hashable, Sendable {
    /// 32 hex digits: those of `high`, then those of `low`.
    case bits(high: UInt64, low: UInt64)
    /// Any other text.
    case text(String)

    /// The identifier of `text`.
    init(_ text: String) {
        var copy = text
        let parsed = copy.withUTF8 { bytes -> (UInt64, UInt64)? in
            guard bytes.count == 32, let high = Self.parseHex(bytes, from: 0),
                  let low = Self.parseHex(bytes, from: 16) else { return nil }
            return (high, low)
        }
        self = parsed.map { .bits(high: $0.0, low: $0.1) } ?? .text(text)
    }

    /// The text: 32 lower-case hex digits for bits.
    var text: String {
        switch self {
        case let .bits(high, low):
            withUnsafeBytes(of: Self.digits(high: high, low: low)) { digits in
                String(unsafeUninitializedCapacity: 32) { buffer in
                    UnsafeMutableRawBufferPointer(buffer).copyMemory(from: digits)
                    return 32
                }
            }
        case let .text(text): text
        }
    }

    /// The 32 hex digits of `high` then `low`, in text order in memory: the bytes of four words.
    @inline(__always)
    static func digits(high: UInt64, low: UInt64) -> (UInt64, UInt64, UInt64, UInt64) {
        let (h0, h1) = StableHash.hexWords(high), (l0, l1) = StableHash.hexWords(low)
        // Each word holds its digits in little-endian byte order.
        return (h0.littleEndian, h1.littleEndian, l0.littleEndian, l1.littleEndian)
    }

    private static func parseHex(_ bytes: UnsafeBufferPointer<UInt8>, from offset: Int) -> UInt64? {
        var value: UInt64 = 0
        for i in offset..<offset + 16 {
            let c = bytes[i]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }
}
