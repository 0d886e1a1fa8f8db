import Foundation
import PerimeterNATS
import PerimeterTestSupport
import Testing

@Suite("Subject tokens and partitions (pure)")
struct SubjectTokenTests {
    @Test(arguments: [
        ("van-7", "van-7"), ("TRK_0042", "TRK_0042"), ("a.b", "a=2Eb"), ("a b", "a=20b"), ("*", "=2A"), (">", "=3E"), ("~", "=7E"),
        ("=", "=3D"), ("", "="), ("é", "=C3=A9"), ("e\u{301}", "=C3=A9"), ("🚐", "=F0=9F=9A=90"),
    ])
    func encodesKnownIds(id: String, token: String) {
        #expect(SubjectToken.encode(id) == token)
        #expect(SubjectToken.isValidSubjectToken(SubjectToken.encode(id)))
    }

    @Test func canonicallyEquivalentIdsShareOneToken() {
        // DeviceID compares canonically equivalent ids as equal: they must be one subject and partition.
        #expect(SubjectToken.encode("Cafe\u{301}") == SubjectToken.encode("Caf\u{E9}"))
        #expect(SubjectToken.encode("\u{212B}") == SubjectToken.encode("\u{C5}"))   // Ångström sign vs Å
    }

    @Test func randomIdsRoundTripToValidTokens() throws {
        var random = SplitMix64(seed: 19)
        let alphabet: [Character] = ["a", "Z", "0", "-", "_", ".", " ", "*", ">", "~", "=", "\t", "\n", "\u{0}", "é", "e\u{301}",
                                     "漢", "🚐", "\u{7F}", "%", "$", "/", "\\", "\u{2028}", "\u{FEFF}"]
        var tokens = Set<String>()
        var ids = Set<String>()
        for _ in 0..<3000 {
            let length = Int(random.next() % 12)
            let id = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
            let token = SubjectToken.encode(id)
            #expect(SubjectToken.isValidSubjectToken(token), "\(id.debugDescription) → \(token)")
            #expect(token.utf8.allSatisfy { $0 < 0x80 }, "tokens are ASCII")
            #expect(token.allSatisfy { $0.isLetter || $0.isNumber || "-_=".contains($0) }, "a valid key-value key too: \(token)")
            let decoded = try #require(SubjectToken.decode(token), "\(token) decodes")
            #expect(decoded == id.precomposedStringWithCanonicalMapping)
            #expect(decoded == id, "a round trip keeps the id (as Swift compares it)")
            let normalized = id.precomposedStringWithCanonicalMapping
            if !ids.contains(normalized) {
                ids.insert(normalized)
                #expect(tokens.insert(token).inserted, "two different ids share the token \(token)")
            }
        }
    }

    @Test(arguments: ["", "a.b", "a b", "*", ">", "~", "=", "=2", "=2e", "=41", "=ZZ", "=C3", "a=", "é", "=tick"])
    func rejectsWhatNoIdEncodesTo(token: String) {
        if token == "=" {
            #expect(SubjectToken.decode(token) == "")   // the empty id
        } else {
            #expect(SubjectToken.decode(token) == nil, "\(token.debugDescription)")
        }
    }

    @Test func validSubjectTokens() {
        #expect(SubjectToken.isValidSubjectToken("abc"))
        for bad in ["", "a.b", "a b", "a*", "a>", "a\tb", "a\nb", "a\u{0}b"] {
            #expect(!SubjectToken.isValidSubjectToken(bad), "\(bad.debugDescription)")
        }
    }

    @Test func fnv1a32KnownVectors() {
        // The published FNV-1a 32-bit test vectors.
        #expect(SubjectToken.fnv1a32("".utf8) == 0x811C_9DC5)
        #expect(SubjectToken.fnv1a32("a".utf8) == 0xE40C_292C)
        #expect(SubjectToken.fnv1a32("foobar".utf8) == 0xBF9C_F968)
    }
}
