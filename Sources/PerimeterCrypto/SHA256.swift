internal import CCrypto

/// SHA-256 (FIPS 180-4) from OpenSSL's libcrypto: webhook signatures (``HMACSHA256``) and comparing
/// bearer tokens.
///
/// A value type: copying a hash in progress copies its state (copy on write), so both copies can be
/// finished independently.
///
/// ```swift
/// var hash = SHA256()
/// hash.update(Array("abc".utf8))
/// let digest = hash.finalize()   // 32 bytes
/// ```
public struct SHA256: Sendable {
    /// The digest length in bytes.
    public static let digestCount = 32
    /// The block length in bytes.
    public static let blockCount = 64

    private var state: DigestState

    /// A fresh hash.
    public init() { state = DigestState() }

    /// The digest of `bytes`.
    /// - Complexity: O(n).
    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalize()
    }

    /// Feeds `bytes`.
    /// - Complexity: O(n).
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        let state = self.state
        if bytes.withContiguousStorageIfAvailable({ state.update($0) }) == nil {
            Array(bytes).withUnsafeBufferPointer { state.update($0) }
        }
    }

    /// Returns the 32-byte digest of everything fed; the hash starts afresh afterwards.
    public mutating func finalize() -> [UInt8] {
        if !isKnownUniquelyReferenced(&state) { state = state.copy() }
        return state.finalize()
    }
}

/// One EVP digest context. Owned by exactly one ``SHA256`` value while it is mutated (copy on write),
/// hence `@unchecked Sendable`.
private final class DigestState: @unchecked Sendable {
    let context: OpaquePointer

    init() {
        // Allocation fails only when memory is exhausted; there is nothing sensible to return then.
        guard let context = EVP_MD_CTX_new() else { fatalError("libcrypto: EVP_MD_CTX_new failed (out of memory)") }
        self.context = context
        reset()
    }

    private init(copying other: DigestState) {
        guard let context = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(context, other.context) == 1 else {
            fatalError("libcrypto: copying a SHA-256 context failed (out of memory)")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    func copy() -> DigestState { DigestState(copying: self) }

    func reset() {
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            fatalError("libcrypto: SHA-256 is unavailable (EVP_DigestInit_ex failed)")
        }
    }

    func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        _ = EVP_DigestUpdate(context, base, bytes.count)
    }

    func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256.digestCount)
        var length: UInt32 = 0
        _ = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        reset()
        return digest
    }
}
