extension JSONScanner {
    /// Exact powers of ten for the fast path (10^22 is the largest exactly representable one).
    @usableFromInline static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// Reads a number (RFC 8259 grammar) at `index`.
    ///
    /// Integers without fraction or exponent that fit in `Int64` are exact. Doubles use an exact fast path when the
    /// decimal significand is below 2^53 and the power of ten is at most 22 (both operands are
    /// exact, so the one IEEE multiplication or division is correctly rounded); otherwise the token is handed to
    /// Swift's correctly rounded `Double(String)`. Out-of-range magnitudes give ±infinity or ±0.
    /// - Complexity: O(token length); allocates only on the slow path.
    mutating func readNumber() throws(Failure) -> Number {
        let start = index
        var i = index
        let negative = i < count && base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        var significand: UInt64 = 0
        var digits = 0           // significant digits accumulated in `significand`
        var dropped = false      // digits beyond 19 that did not fit
        var exponent = 0         // power of ten applied to `significand`
        let integerStart = i
        while i < count, case let d = base[i] &- UInt8(ascii: "0"), d < 10 {
            if digits < 19 {
                significand = significand &* 10 &+ UInt64(d)
                if significand != 0 { digits += 1 }
            } else {
                exponent += 1
                dropped = dropped || d != 0
            }
            i += 1
        }
        let integerDigits = i - integerStart
        guard integerDigits > 0 else { throw failure("invalid number: expected a digit", at: i) }
        if integerDigits > 1 && base[integerStart] == UInt8(ascii: "0") {
            throw failure("invalid number: leading zeros are not allowed", at: start)
        }
        var isInteger = true
        if i < count && base[i] == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let fractionStart = i
            while i < count, case let d = base[i] &- UInt8(ascii: "0"), d < 10 {
                if digits < 19 {
                    significand = significand &* 10 &+ UInt64(d)
                    if significand != 0 { digits += 1 }
                    exponent -= 1
                } else {
                    dropped = dropped || d != 0
                }
                i += 1
            }
            guard i > fractionStart else { throw failure("invalid number: expected a digit after '.'", at: i) }
        }
        if i < count && (base[i] == UInt8(ascii: "e") || base[i] == UInt8(ascii: "E")) {
            isInteger = false
            i += 1
            var exponentNegative = false
            if i < count && (base[i] == UInt8(ascii: "+") || base[i] == UInt8(ascii: "-")) {
                exponentNegative = base[i] == UInt8(ascii: "-")
                i += 1
            }
            let exponentStart = i
            var written = 0
            while i < count, case let d = base[i] &- UInt8(ascii: "0"), d < 10 {
                if written < 100_000 { written = written * 10 + Int(d) }
                i += 1
            }
            guard i > exponentStart else { throw failure("invalid number: expected a digit in the exponent", at: i) }
            exponent += exponentNegative ? -written : written
        }
        index = i
        if isInteger && !dropped && exponent == 0 {
            if negative {
                if significand <= UInt64(Int64.max) { return .integer(-Int64(significand)) }
                if significand == UInt64(Int64.max) + 1 { return .integer(Int64.min) }
            } else if significand <= UInt64(Int64.max) {
                return .integer(Int64(significand))
            }
        }
        if !dropped && significand < (1 << 53) && exponent >= -22 && exponent <= 22 {
            var value = Double(significand)
            if exponent < 0 {
                value /= Self.powersOfTen[-exponent]
            } else {
                value *= Self.powersOfTen[exponent]
            }
            return .double(negative ? -value : value)
        }
        if significand == 0 && !dropped { return .double(negative ? -0.0 : 0.0) }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
        guard let value = Double(text) else { throw failure("invalid number", at: start) }
        return .double(value)
    }

    /// Reads a number as a `Double` (integers beyond 2^53 are rounded).
    @inline(__always) mutating func readDouble() throws(Failure) -> Double {
        switch try readNumber() {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        }
    }
}
