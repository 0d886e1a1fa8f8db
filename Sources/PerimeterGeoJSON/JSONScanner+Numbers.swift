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
    /// exact, so the one IEEE multiplication or division is correctly rounded), then an exact 128-bit path for up to 19
    /// significant digits and |exponent| ≤ 19 (``exactDouble(significand:exponent:)``); otherwise the token is handed to
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
        // UInt128 is in every Linux toolchain; Apple platforms have it from their 2024 releases (older
        // ones take the `Double(String)` path below).
        if #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *), !dropped,
           let value = Self.exactDouble(significand: significand, exponent: exponent) {
            return .double(negative ? -value : value)
        }
        if significand == 0 && !dropped { return .double(negative ? -0.0 : 0.0) }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: i - start), as: UTF8.self)
        guard let value = Double(text) else { throw failure("invalid number", at: start) }
        return .double(value)
    }

    /// 10^0 … 10^19, every power of ten that fits in `UInt64`.
    static let integerPowersOfTen: [UInt64] = (0...19).map { k in (0..<k).reduce(1) { power, _ in power * 10 } }

    /// The correctly rounded `Double` of `significand` × 10^`exponent` for |`exponent`| ≤ 19, computed exactly
    /// with 128-bit integers (the quotient of a division keeps at least 64 bits, and its remainder decides
    /// ties); `nil` for a zero significand or a larger exponent. It serves the decimals with 17–19 significant
    /// digits (most coordinates written by `Double.description`) that the exact fast path cannot take.
    /// - Complexity: O(1), no allocation.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    static func exactDouble(significand: UInt64, exponent: Int) -> Double? {
        guard significand != 0, exponent >= -19, exponent <= 19 else { return nil }
        let power = UInt128(integerPowersOfTen[abs(exponent)])
        let quotient: UInt128
        let scale: Int                 // the value is (quotient + fraction) × 2^scale
        var hasFraction = false        // whether the division left a remainder
        if exponent >= 0 {
            quotient = UInt128(significand) * power
            scale = 0
        } else {
            let shift = 64 + significand.leadingZeroBitCount
            let (q, r) = (UInt128(significand) << shift).quotientAndRemainder(dividingBy: power)
            quotient = q
            hasFraction = r != 0
            scale = -shift
        }
        let bits = 128 - quotient.leadingZeroBitCount
        if bits <= 53 { return Double(UInt64(quotient)) }  // only products get here: exact, scale 0
        let drop = bits - 53
        var mantissa = UInt64(truncatingIfNeeded: quotient >> drop)
        let rest = quotient & ((UInt128(1) << drop) - 1)
        let half = UInt128(1) << (drop - 1)
        if rest > half || (rest == half && (hasFraction || mantissa & 1 == 1)) { mantissa += 1 }
        // Normal range throughout (1e-19 … 2^128), so scaling by a power of two is exact.
        return Double(sign: .plus, exponent: drop + scale, significand: Double(mantissa))
    }

    /// Reads a number as a `Double` (integers beyond 2^53 are rounded).
    @inline(__always) mutating func readDouble() throws(Failure) -> Double {
        if let value = readShortDecimal() { return value }
        switch try readNumber() {
        case .integer(let value): return Double(value)
        case .double(let value): return value
        }
    }

    /// `[a, b]` at `index` (which must be `[`), whitespace allowed, when both numbers have the form
    /// ``readShortDecimal()`` reads: the two values; `nil`, with nothing consumed, for anything else.
    @inline(__always) mutating func readShortDecimalPair() -> (Double, Double)? {
        let start = index
        index += 1
        skipWhitespace()
        if let a = readShortDecimal() {
            skipWhitespace()
            if current == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
                if let b = readShortDecimal() {
                    skipWhitespace()
                    if current == UInt8(ascii: "]") {
                        index += 1
                        return (a, b)
                    }
                }
            }
        }
        index = start
        return nil
    }

    /// The number at `index` when it has the common form, read in one pass: an optional minus, digits
    /// (no leading zero), optionally `.` and digits, no exponent, 19 digits at most in all and a
    /// significand below 2^53 (coordinates as GeoJSON files write them). `nil`, with nothing consumed, for
    /// anything else, which ``readNumber()`` then reads (or reports).
    ///
    /// The value is bit for bit ``readDouble()``'s through ``readNumber()``: with 19 digits at most none is
    /// dropped and the significand is the same, so it takes the same exact fast path (one correctly rounded
    /// division by a power of ten, or an integer converted exactly). It only skips the bookkeeping that
    /// longer numbers need, about half the instructions of reading a coordinate.
    @inline(__always) mutating func readShortDecimal() -> Double? {
        var i = index
        let negative = i < count && base[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let integerStart = i
        // Wrapping: a significand of more than 19 digits may wrap, and is then refused below.
        var significand: UInt64 = 0
        while i < count, case let d = base[i] &- UInt8(ascii: "0"), d < 10 {
            significand = significand &* 10 &+ UInt64(d)
            i += 1
        }
        let integerDigits = i - integerStart
        guard integerDigits == 1 || (integerDigits > 1 && base[integerStart] != UInt8(ascii: "0")) else { return nil }
        var fractionDigits = 0
        if i < count && base[i] == UInt8(ascii: ".") {
            i += 1
            let fractionStart = i
            while i < count, case let d = base[i] &- UInt8(ascii: "0"), d < 10 {
                significand = significand &* 10 &+ UInt64(d)
                i += 1
            }
            fractionDigits = i - fractionStart
            guard fractionDigits > 0 else { return nil }
        }
        // `| 0x20` folds `E` onto `e` (and nothing else onto it).
        guard integerDigits + fractionDigits <= 19, significand < 1 << 53,
              i == count || base[i] | 0x20 != UInt8(ascii: "e") else { return nil }
        index = i
        if fractionDigits == 0 { return Double(negative ? -Int64(significand) : Int64(significand)) }
        let value = Double(significand) / Self.powersOfTen[fractionDigits]
        return negative ? -value : value
    }
}
