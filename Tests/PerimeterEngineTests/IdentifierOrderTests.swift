import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterTestSupport
import Testing

/// Device and fence ids order events; their order must be a strict weak order that agrees with `==`
/// (equal ids never sort apart), also for text that is equal only after Unicode normalisation.
@Suite("Id order agrees with equality")
struct IdentifierOrderTests {
    /// Pieces that build canonically equivalent but byte-wise different strings.
    static let pieces = ["e", "\u{E9}", "e\u{301}", "a", "\u{301}", "\u{323}", "z", "1", "É", "E\u{301}"]

    static func randomText(_ random: inout SplitMix64) -> String {
        (0..<Int.random(in: 0...3, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func orderAgreesWithEquality(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<3_000 {
            let a = Self.randomText(&random), b = Self.randomText(&random)
            let (da, db) = (DeviceID(a), DeviceID(b))
            #expect((!(da < db) && !(db < da)) == (da == db), "devices \(a.unicodeScalars.map(\.value)) / \(b.unicodeScalars.map(\.value))")
            let (fa, fb) = (FenceID(a), FenceID(b))
            #expect((!(fa < fb) && !(fb < fa)) == (fa == fb), "fences \(a.unicodeScalars.map(\.value)) / \(b.unicodeScalars.map(\.value))")
        }
    }

    /// Ids of 0–40 characters (short ones are kept inside the `String`, long ones on the heap), ASCII
    /// with now and then a non-ASCII piece; often sharing a prefix, so that comparisons reach far in.
    static func randomID(_ random: inout SplitMix64) -> String {
        let ascii = Array("0123456789abcXYZ-_ ~")
        let prefix = ["", "fence-", "zone/2024/", "e"].randomElement(using: &random)!
        let body = (0..<Int.random(in: 0...34, using: &random)).map { _ -> String in
            Int.random(in: 0..<12, using: &random) == 0 ? pieces.randomElement(using: &random)!
                : String(ascii.randomElement(using: &random)!)
        }.joined()
        return prefix + body
    }

    /// The order as defined: UTF-8 bytes of the canonical compositions, compared byte by byte.
    static func definedOrder(_ a: String, _ b: String) -> Bool {
        Array(a.precomposedStringWithCanonicalMapping.utf8).lexicographicallyPrecedes(Array(b.precomposedStringWithCanonicalMapping.utf8))
    }

    @Test("the order is the defined one, ASCII read in place or not", arguments: [4, 5, 6] as [UInt64])
    func orderIsDefinedOrder(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var ascii = 0, other = 0
        for _ in 0..<4_000 {
            let a = Self.randomID(&random)
            // Half the time an id that differs from `a` only at its end, or equals it.
            let b = Bool.random(using: &random) ? Self.randomID(&random)
                : String(a.dropLast(Int.random(in: 0...2, using: &random))) + (Bool.random(using: &random) ? "" : Self.randomID(&random))
            if a.utf8.allSatisfy({ $0 < 0x80 }) && b.utf8.allSatisfy({ $0 < 0x80 }) { ascii += 1 } else { other += 1 }
            #expect((FenceID(a) < FenceID(b)) == Self.definedOrder(a, b), "\(a.unicodeScalars.map(\.value)) / \(b.unicodeScalars.map(\.value))")
            #expect((DeviceID(a) < DeviceID(b)) == Self.definedOrder(a, b))
        }
        #expect(ascii > 1_000 && other > 1_000, "both kinds occur (\(ascii) ASCII pairs, \(other) others)")
    }

    @Test func combiningMarkAfterASCIIDecides() {
        // Byte-wise "e" + U+0301 precedes "f"; composed, "é" (C3 A9) follows it.
        #expect(FenceID("f") < FenceID("e\u{301}"))
        #expect(!(FenceID("e\u{301}") < FenceID("f")))
        #expect(FenceID("ab") < FenceID("abc") && !(FenceID("abc") < FenceID("ab")) && !(FenceID("ab") < FenceID("ab")))
        let long = String(repeating: "x", count: 40)
        #expect(FenceID(long + "a") < FenceID(long + "b") && FenceID(long + "b") < FenceID(long + "e\u{301}"))
    }

    @Test func asciiIsByteOrder() {
        #expect(DeviceID("Z") < DeviceID("a"))
        #expect(DeviceID("a") < DeviceID("ab"))
        #expect(FenceID("10") < FenceID("9"))
        #expect(DeviceID("e\u{301}") == DeviceID("\u{E9}"))
        #expect(!(DeviceID("e\u{301}") < DeviceID("\u{E9}")) && !(DeviceID("\u{E9}") < DeviceID("e\u{301}")))
    }
}
