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

    @inline(__always)
    mutating func combine(_ value: UInt64) {
        a = StableHash.mix(a ^ value) &+ b
        b = StableHash.mix(b &+ (value &* 0x9E37_79B9_7F4A_7C15)) ^ ((a << 23) | (a >> 41))
    }

    mutating func combine(_ value: Double) { combine(value.bitPattern) }

    /// Combines the text's UTF-8 bytes as little-endian words (the last one zero-padded, and a zero
    /// word when the bytes fill whole words), then the byte count.
    mutating func combine(_ text: String) {
        let done = text.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            combine(bytes: UnsafeRawBufferPointer(bytes))
            return true
        }
        if done != nil { return }
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

    /// ``combine(_:)-(String)`` over contiguous bytes, eight at a time.
    @inline(__always)
    private mutating func combine(bytes: UnsafeRawBufferPointer) {
        let n = bytes.count
        var i = 0
        while i + 8 <= n {
            combine(UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)))
            i += 8
        }
        combine(bytes.littleEndianTail(from: i))
        combine(UInt64(n))
    }

    /// Combines the text of ``hex`` of `other` (32 hex digits) without writing it out: the same
    /// words as `combine(other.hex)`.
    mutating func combine(hexOf other: StableHash) {
        let (first, second) = other.halves
        let (w0, w1) = Self.hexWords(first), (w2, w3) = Self.hexWords(second)
        combine(w0)
        combine(w1)
        combine(w2)
        combine(w3)
        combine(UInt64(0))
        combine(UInt64(32))
    }

    /// The hash as one 64-bit word (for a hash that is itself combined into another).
    var word: UInt64 { StableHash.mix(a ^ (b >> 1)) }

    /// The two 64-bit halves whose hex digits make ``hex``.
    var halves: (UInt64, UInt64) { (StableHash.mix(a ^ (b >> 1)), StableHash.mix(b ^ a)) }

    /// The hash as 32 lower-case hex digits.
    var hex: String { identifier.text }

    /// The hash as an identifier whose text is ``hex``, made when read.
    var identifier: EventIdentifier {
        let (first, second) = halves
        return .bits(high: first, low: second)
    }

    /// The 16 lower-case hex digits of `value` (leading zeros kept) as ASCII bytes packed into two
    /// little-endian words: the first eight digits, then the last eight.
    @inline(__always)
    static func hexWords(_ value: UInt64) -> (UInt64, UInt64) {
        (hexWord(UInt32(truncatingIfNeeded: value >> 32)), hexWord(UInt32(truncatingIfNeeded: value)))
    }

    /// The eight hex digits of `value`, most significant first, as the bytes of a little-endian word.
    ///
    /// All eight at once (a digit per byte of one word) rather than a loop over the digits: an event's id
    /// hashes the visit id's 32 digits, and the loop was about half of the instructions of making an event.
    @inline(__always)
    static func hexWord(_ value: UInt32) -> UInt64 {
        // Spread the nibbles to one per byte, the lowest nibble in the lowest byte …
        var x = UInt64(value)
        x = (x | x &<< 16) & 0x0000_FFFF_0000_FFFF
        x = (x | x &<< 8) & 0x00FF_00FF_00FF_00FF
        x = (x | x &<< 4) & 0x0F0F_0F0F_0F0F_0F0F
        // … put the most significant first, and make each byte ASCII: '0' + d, plus 39 more ('a' - '0' - 10)
        // where d ≥ 10 (d + 6 carries into bit 4 exactly then). No byte carries into the next.
        x = x.byteSwapped
        let letters = ((x &+ 0x0606_0606_0606_0606) &>> 4) & 0x0101_0101_0101_0101
        return x &+ 0x3030_3030_3030_3030 &+ letters &* 39
    }
}

extension UnsafeRawBufferPointer {
    /// The bytes from `offset` to the end (fewer than eight) as one little-endian word, zero-padded.
    ///
    /// Read with at most two loads instead of byte by byte (most device ids are shorter than a word, so
    /// for them this is the whole of the id's reading): when the buffer holds eight bytes or more, one
    /// load of the last eight, shifted; otherwise two overlapping four-byte loads, or for one to three
    /// bytes the first, middle and last byte (overlaps put the same byte in the same place twice).
    @inline(__always)
    func littleEndianTail(from offset: Int) -> UInt64 {
        let r = count - offset
        guard r > 0 else { return 0 }
        if count >= 8 {
            let last = UInt64(littleEndian: loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            return last &>> UInt64(8 * (8 - r))
        }
        if r >= 4 {
            let low = UInt64(UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
            let high = UInt64(UInt32(littleEndian: loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)))
            return low | high &<< UInt64(8 * (r - 4))
        }
        let middle = r / 2
        return UInt64(self[offset]) | UInt64(self[offset + middle]) &<< UInt64(8 * middle)
            | UInt64(self[count - 1]) &<< UInt64(8 * (r - 1))
    }
}
