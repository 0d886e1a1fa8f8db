import Foundation

/// Turns any identifier into one NATS subject token and back, and picks a partition for a token the
/// way the server's `{{partition(N,…)}}` subject mapping does.
///
/// A subject is tokens separated by `.`; a token must not be empty and must not contain `.`, `*`, `>`
/// or white space. Device ids may contain all of those, so a device id is encoded before it becomes
/// part of a subject (`perimeter.updates.<token>`):
///
/// - the id is first put in Unicode's canonical composition (NFC), because device ids that are
///   canonically equivalent are the same device (`DeviceID` compares that way) and must
///   land in the same subject and partition;
/// - each UTF-8 byte that is an ASCII letter, digit, `-` or `_` stays as it is; every other byte
///   becomes `=` and two upper-case hex digits, as in quoted-printable (`.` → `=2E`, `=` → `=3D`,
///   `é` → `=C3=A9`);
/// - the empty id becomes `=` alone, which no other id encodes to.
///
/// The encoding is injective and decodable; an id of n bytes gives at most 3n characters, and the
/// ASCII ids fleets usually use (`van-7`, `TRK_0042`) stay readable and unchanged. Its output is also a
/// valid JetStream key-value key (letters, digits, `-`, `_`, `=`, `/`, `.`), so fence and device ids
/// can name keys the same way.
public enum SubjectToken {
    /// The token for `identifier`.
    public static func encode(_ identifier: String) -> String {
        if identifier.isEmpty { return "=" }
        let text = isASCII(identifier) ? identifier : identifier.precomposedStringWithCanonicalMapping
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if isPlain(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "="))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The identifier a token encodes (in NFC), or `nil` when `token` is not an encoding's output:
    /// a byte outside the plain set unescaped, a `=` not followed by two upper-case hex digits, an
    /// escape of a plain byte, or bytes that are not UTF-8.
    public static func decode(_ token: Substring) -> String? {
        if token == "=" { return "" }
        guard !token.isEmpty else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(token.utf8.count)
        var iterator = token.utf8.makeIterator()
        while let byte = iterator.next() {
            if isPlain(byte) {
                bytes.append(byte)
                continue
            }
            guard byte == UInt8(ascii: "="), let high = iterator.next().flatMap(hexValue),
                  let low = iterator.next().flatMap(hexValue) else { return nil }
            let decoded = high << 4 | low
            guard !isPlain(decoded) else { return nil }   // one spelling per id
            bytes.append(decoded)
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        return text
    }

    /// ``decode(_:)`` of a whole string.
    public static func decode(_ token: String) -> String? { decode(token[...]) }

    /// Whether `token` may stand as one token of a NATS subject: not empty, no `.`, `*`, `>`, white
    /// space or control characters (the rule the server applies, plus the control characters that
    /// would break its protocol lines).
    public static func isValidSubjectToken(_ token: String) -> Bool {
        !token.isEmpty && token.unicodeScalars.allSatisfy { scalar in
            scalar != "." && scalar != "*" && scalar != ">" && !scalar.properties.isWhitespace
                && scalar.value >= 0x20 && scalar.value != 0x7F
        }
    }

    /// FNV-1a, 32 bits, of `bytes`: the hash JetStream's `partition` subject mapping takes of the
    /// mapped token(s).
    public static func fnv1a32<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var hash: UInt32 = 0x811C_9DC5
        for byte in bytes {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return hash
    }

    /// The partition (0 ..< `count`) that a server's `{{partition(count,k)}}` mapping picks when the
    /// k-th wildcard of the source subject is `token`: FNV-1a-32 of the token's bytes, modulo `count`.
    public static func partition(ofToken token: String, count: Int) -> Int {
        precondition(count > 0, "a partition count is positive")
        return Int(fnv1a32(token.utf8) % UInt32(count))
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isASCII(_ text: String) -> Bool { text.utf8.allSatisfy { $0 < 0x80 } }
}
