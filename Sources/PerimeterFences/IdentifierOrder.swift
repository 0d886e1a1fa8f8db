import Foundation

/// The order of fence and device ids: byte-wise UTF-8 order of the ids' canonical composition (NFC).
///
/// Ids are equal when their text is canonically equivalent (Swift's `String ==`), so the order must
/// not tell such ids apart: it compares the NFC forms. For ASCII text (the common case) that is plain
/// byte order, decided without normalising. Swift's own `String <` is not used because it does not
/// always agree with `==` on text that is not in NFC (`"e\u{301}"` and `"\u{E9}z"` compare as neither
/// less nor equal).
public enum IdentifierOrder {
    /// Whether `a` sorts before `b`.
    /// - Complexity: O(length); normalises only text that is not ASCII.
    public static func precedes(_ a: String, _ b: String) -> Bool {
        if isASCII(a) && isASCII(b) { return a.utf8.lexicographicallyPrecedes(b.utf8) }
        return a.precomposedStringWithCanonicalMapping.utf8
            .lexicographicallyPrecedes(b.precomposedStringWithCanonicalMapping.utf8)
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 }
    }
}
