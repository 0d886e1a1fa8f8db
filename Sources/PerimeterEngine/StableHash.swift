/// A 128-bit hash that is the same on every run and platform (unlike `Hasher`, which is seeded per
/// process). Used for event and visit ids; not for security.
struct StableHash {
    private var a: UInt64 = 0x243F_6A88_85A3_08D3
    private var b: UInt64 = 0x1319_8A2E_0370_7344

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func combine(_ value: UInt64) {
        a = StableHash.mix(a ^ value) &+ b
        b = StableHash.mix(b &+ (value &* 0x9E37_79B9_7F4A_7C15)) ^ ((a << 23) | (a >> 41))
    }

    mutating func combine(_ value: Double) { combine(value.bitPattern) }

    mutating func combine(_ text: String) {
        var word: UInt64 = 0
        var shift: UInt64 = 0
        var count: UInt64 = 0
        for byte in text.utf8 {
            word |= UInt64(byte) << shift
            shift += 8
            count += 1
            if shift == 64 {
                combine(word)
                word = 0
                shift = 0
            }
        }
        combine(word)
        combine(count)
    }

    /// The hash as one 64-bit word (for a hash that is itself combined into another).
    var word: UInt64 { StableHash.mix(a ^ (b >> 1)) }

    /// The hash as 32 lower-case hex digits.
    var hex: String {
        let first = StableHash.mix(a ^ (b >> 1)), second = StableHash.mix(b ^ a)
        return String(unsafeUninitializedCapacity: 32) { buffer in
            StableHash.writeHex(first, into: buffer, at: 0)
            StableHash.writeHex(second, into: buffer, at: 16)
            return 32
        }
    }

    /// Writes `value` as 16 lower-case hex digits (leading zeros kept) at `offset`.
    @inline(__always)
    private static func writeHex(_ value: UInt64, into buffer: UnsafeMutableBufferPointer<UInt8>, at offset: Int) {
        let digits: StaticString = "0123456789abcdef"
        digits.withUTF8Buffer { digits in
            for i in 0..<16 {
                buffer[offset + i] = digits[Int((value >> UInt64(60 - 4 * i)) & 0xF)]
            }
        }
    }
}
