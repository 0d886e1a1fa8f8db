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

    @Test func asciiIsByteOrder() {
        #expect(DeviceID("Z") < DeviceID("a"))
        #expect(DeviceID("a") < DeviceID("ab"))
        #expect(FenceID("10") < FenceID("9"))
        #expect(DeviceID("e\u{301}") == DeviceID("\u{E9}"))
        #expect(!(DeviceID("e\u{301}") < DeviceID("\u{E9}")) && !(DeviceID("\u{E9}") < DeviceID("e\u{301}")))
    }
}
