internal import CCrypto

/// HMAC-SHA256 (RFC 2104) from OpenSSL's libcrypto, and the hex and constant-time helpers signatures
/// and bearer tokens need.
public enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    /// - Complexity: O(key + message).
    public static func authenticationCode(for message: some Sequence<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        // libcrypto wants non-null pointers even for empty inputs: a one-byte buffer passed with length 0.
        let keyBytes = key.isEmpty ? [0] : Array(key)
        let messageBytes = Array(message)
        let messageStorage = messageBytes.isEmpty ? [0] : messageBytes
        var mac = [UInt8](repeating: 0, count: SHA256.digestCount)
        var length: UInt32 = 0
        let result = keyBytes.withUnsafeBytes { k in
            messageStorage.withUnsafeBufferPointer { m in
                mac.withUnsafeMutableBufferPointer { out in
                    HMAC(EVP_sha256(), k.baseAddress, Int32(key.count), m.baseAddress, messageBytes.count,
                         out.baseAddress, &length)
                }
            }
        }
        precondition(result != nil && length == UInt32(SHA256.digestCount), "libcrypto: HMAC-SHA256 failed")
        return mac
    }

    /// Lower-case hexadecimal text of `bytes`.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `a` and `b` are equal, taking the same time wherever they differ (`CRYPTO_memcmp`; for
    /// comparing MACs). Different lengths compare unequal at once: the length of a MAC is no secret.
    public static func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        let x = Array(a)
        let y = Array(b)
        return x.withUnsafeBytes { p in y.withUnsafeBytes { q in CRYPTO_memcmp(p.baseAddress, q.baseAddress, x.count) == 0 } }
    }

    /// Whether the secrets `a` and `b` are equal, in a time that depends on neither their contents nor
    /// their lengths: it compares their SHA-256 digests with `CRYPTO_memcmp` (for bearer tokens, whose
    /// length is part of the secret).
    public static func secretsEqual(_ a: some Sequence<UInt8>, _ b: some Sequence<UInt8>) -> Bool {
        constantTimeEquals(SHA256.hash(a), SHA256.hash(b))
    }
}
