/// Strict decimal numbers as found in track files.
enum TrackNumber {
    /// Parses a finite decimal number (optional sign, digits, optional fraction and exponent), ignoring
    /// surrounding spaces; rejects `nan`, `inf`, hexadecimal and empty text.
    static func parse<S: StringProtocol>(_ text: S) -> Double? {
        let substring = Substring(text)
        let utf8 = substring.utf8
        var start = utf8.startIndex, end = utf8.endIndex
        while start < end, isSpace(utf8[start]) { start = utf8.index(after: start) }
        while end > start, isSpace(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        guard start < end else { return nil }
        var sawDigit = false
        for c in utf8[start..<end] {
            switch c {
            case 0x30...0x39: sawDigit = true
            case 0x2B, 0x2D, 0x2E, 0x45, 0x65: break
            default: return nil
            }
        }
        guard sawDigit, let value = Double(Substring(utf8[start..<end])), value.isFinite else { return nil }
        return value
    }

    @inline(__always) private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0D || c == 0x0A }
}
