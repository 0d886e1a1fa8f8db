/// Strict decimal numbers as found in track files.
enum TrackNumber {
    /// Parses a finite decimal number (optional sign, digits, optional fraction and exponent), ignoring
    /// surrounding spaces; rejects `nan`, `inf`, hexadecimal and empty text.
    static func parse<S: StringProtocol>(_ text: S) -> Double? {
        var sawDigit = false
        var first: String.Index? = nil, last = text.startIndex
        for index in text.indices {
            let c = text[index]
            if c == " " || c == "\t" || c == "\r" || c == "\n" { continue }
            if first == nil { first = index }
            last = index
        }
        guard let first else { return nil }
        let trimmed = text[first...last]
        for scalar in trimmed.unicodeScalars {
            switch scalar {
            case "0"..."9": sawDigit = true
            case "+", "-", ".", "e", "E": break
            default: return nil
            }
        }
        guard sawDigit, let value = Double(String(trimmed)), value.isFinite else { return nil }
        return value
    }
}
