import Foundation
import Testing
import PerimeterCrypto
import PerimeterTestSupport
@testable import PerimeterWebhooks

private func hexBytes(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var index = text.startIndex
    while index < text.endIndex {
        let next = text.index(index, offsetBy: 2)
        bytes.append(UInt8(text[index..<next], radix: 16)!)
        index = next
    }
    return bytes
}

@Suite("SHA-256 and HMAC-SHA256 (libcrypto)")
struct CryptoTests {
    // FIPS 180-4 examples (NIST CSRC "SHA256.pdf", "SHA2 additional examples").
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func sha256Vectors(message: String, digest: String) {
        #expect(HMACSHA256.hex(SHA256.hash(Array(message.utf8))) == digest)
    }

    @Test func sha256OneMillionA() {
        #expect(HMACSHA256.hex(SHA256.hash(repeatElement(UInt8(ascii: "a"), count: 1_000_000)))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func sha256IncrementalEqualsOneShot() {
        var rng = SplitMix64(seed: 7)
        for length in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 1000] {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &rng) }
            var hasher = SHA256()
            var offset = 0
            while offset < bytes.count {
                let step = Int.random(in: 1...17, using: &rng)
                hasher.update(bytes[offset..<min(bytes.count, offset + step)])
                offset += step
            }
            #expect(hasher.finalize() == SHA256.hash(bytes), "length \(length)")
        }
    }

    // RFC 4231 test cases 1, 2, 3, 4, 6, 7 (case 5 is a truncated MAC).
    @Test(arguments: [
        (String(repeating: "0b", count: 20), HMACSHA256.hex(Array("Hi There".utf8)),
         "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (HMACSHA256.hex(Array("Jefe".utf8)), HMACSHA256.hex(Array("what do ya want for nothing?".utf8)),
         "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        (String(repeating: "aa", count: 20), String(repeating: "dd", count: 50),
         "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        ("0102030405060708090a0b0c0d0e0f10111213141516171819", String(repeating: "cd", count: 50),
         "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        (String(repeating: "aa", count: 131),
         HMACSHA256.hex(Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)),
         "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        (String(repeating: "aa", count: 131),
         HMACSHA256.hex(Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8)),
         "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func hmacVectors(key: String, data: String, mac: String) {
        #expect(HMACSHA256.hex(HMACSHA256.authenticationCode(for: hexBytes(data), key: hexBytes(key))) == mac)
    }

    @Test func hmacLongKeyEqualsHashedKey() {
        var rng = SplitMix64(seed: 42)
        for _ in 0..<20 {
            let key = (0..<Int.random(in: 65...300, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let message = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect(HMACSHA256.authenticationCode(for: message, key: key)
                    == HMACSHA256.authenticationCode(for: message, key: SHA256.hash(key)))
        }
    }

    @Test func constantTimeEquals() {
        #expect(HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!HMACSHA256.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(HMACSHA256.constantTimeEquals([UInt8](), [UInt8]()))
    }

    @Test func copiedHashesFinishIndependently() {
        var first = SHA256()
        first.update(Array("ab".utf8))
        var second = first
        second.update(Array("c".utf8))
        #expect(HMACSHA256.hex(second.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(first.finalize() == SHA256.hash(Array("ab".utf8)))
        #expect(first.finalize() == SHA256.hash([]), "a finalised hash starts afresh")
    }

    @Test func signatureRoundTripAndRejections() {
        let body = Array(#"{"id":"x"}"#.utf8)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let signature = WebhookSignature(body: body, secret: "0123456789abcdef", timestamp: 1_700_000_000)
        // The MAC is HMAC(secret, "<t>.<body>"), computed independently here.
        let expected = HMACSHA256.hex(HMACSHA256.authenticationCode(for: Array("1700000000.".utf8) + body,
                                                                    key: Array("0123456789abcdef".utf8)))
        #expect(signature.headerValue == "t=1700000000,v1=\(expected)")
        #expect(WebhookSignature.verify(headerValue: signature.headerValue, body: body, secret: "0123456789abcdef", now: now))
        #expect(!WebhookSignature.verify(headerValue: signature.headerValue, body: body + [0x20], secret: "0123456789abcdef", now: now))
        #expect(!WebhookSignature.verify(headerValue: signature.headerValue, body: body, secret: "0123456789abcdeF", now: now))
        #expect(!WebhookSignature.verify(headerValue: signature.headerValue, body: body, secret: "0123456789abcdef",
                                         now: now.addingTimeInterval(301)))
        #expect(!WebhookSignature.verify(headerValue: "v1=\(expected)", body: body, secret: "0123456789abcdef", now: now))
        #expect(WebhookSignature(headerValue: "garbage") == nil)
    }
}
