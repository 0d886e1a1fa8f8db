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
        // Native strings (every string made in Swift) read as bytes in place: through the generic UTF-8
        // view the ASCII checks and the comparison cost ≈ 500 instructions for two short ids, which the
        // commit's sort of memberships and the engine's sort of events pay per comparison.
        let inPlace = a.utf8.withContiguousStorageIfAvailable { x -> Bool? in
            b.utf8.withContiguousStorageIfAvailable { y -> Bool? in asciiPrecedes(x, y) } ?? nil
        }
        if let inPlace, let order = inPlace { return order }
        if isASCII(a) && isASCII(b) { return a.utf8.lexicographicallyPrecedes(b.utf8) }
        return a.precomposedStringWithCanonicalMapping.utf8
            .lexicographicallyPrecedes(b.precomposedStringWithCanonicalMapping.utf8)
    }

    /// Byte-wise order of `x` and `y` when both are ASCII; `nil` when either holds a byte of a non-ASCII
    /// character (then the canonical compositions decide: a combining mark after an ASCII letter
    /// composes with it, so even a difference among the leading ASCII bytes does not decide the order).
    @inline(__always)
    static func asciiPrecedes(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Bool? {
        var high: UInt8 = 0
        for byte in x { high |= byte }
        for byte in y { high |= byte }
        guard high < 0x80 else { return nil }
        for i in 0..<min(x.count, y.count) where x[i] != y[i] { return x[i] < y[i] }
        return x.count < y.count
    }

    private static func isASCII(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 < 0x80 }
    }
}
