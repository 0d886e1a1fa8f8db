import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The shortcuts of an update's default path — hex digits made a word at a time, the device table's
/// tags — checked against the plain computations they replace.
@Suite("Update hot path")
struct HotPathTests {
    /// The digits the plain way: `String(value, radix: 16)`, padded to eight, as a little-endian word.
    static func plainHexWord(_ value: UInt32) -> UInt64 {
        let text = String(repeating: "0", count: 8 - String(value, radix: 16).count) + String(value, radix: 16)
        var word: UInt64 = 0
        for (i, byte) in text.utf8.enumerated() { word |= UInt64(byte) << UInt64(8 * i) }
        return word
    }

    @Test("eight hex digits made at once equal the digits written one by one")
    func hexWordMatchesDigits() {
        var values: [UInt32] = [0, 1, 9, 10, 15, 16, 0x9999_9999, 0xAAAA_AAAA, 0xFFFF_FFFF, 0x0123_4567, 0x89AB_CDEF]
        for position in 0..<8 {  // every digit value at every position
            for digit in 0..<16 { values.append(UInt32(digit) << UInt32(4 * position)) }
        }
        var random = SplitMix64(seed: 16)
        for _ in 0..<20_000 { values.append(UInt32(truncatingIfNeeded: random.next())) }
        for value in values {
            #expect(StableHash.hexWord(value) == Self.plainHexWord(value), "\(String(value, radix: 16))")
        }
        let (high, low) = StableHash.hexWords(0x0123_4567_89AB_CDEF)
        #expect(high == Self.plainHexWord(0x0123_4567) && low == Self.plainHexWord(0x89AB_CDEF))
    }
}
