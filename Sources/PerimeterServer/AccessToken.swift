import Foundation
import PerimeterCrypto

/// A bearer token the server accepts: a name (for logs, metrics and rate limits), its scopes and the
/// secret clients send as `Authorization: Bearer <secret>`.
public struct AccessToken: Hashable, Sendable {
    /// What a token may do.
    public enum Scope: String, Hashable, Sendable, CaseIterable {
        /// Read fences, devices, events, metrics.
        case read
        /// Change fences, send locations, set consent.
        case write
        /// Everything (administration: webhooks, deleting groups or every fence, service-wide consent).
        case admin
    }

    /// The token's name.
    public var name: String
    /// Its scopes; `admin` implies the others.
    public var scopes: Set<Scope>
    /// The secret.
    public var secret: String

    /// Creates a token.
    public init(name: String, scopes: Set<Scope>, secret: String) {
        self.name = name
        self.scopes = scopes
        self.secret = secret
    }

    /// Whether `secret` (the bytes after `Bearer `) is this token's secret. The time it takes depends
    /// neither on where the two differ nor on their lengths: their SHA-256 digests are compared with
    /// libcrypto's `CRYPTO_memcmp`.
    public func matches(secret candidate: [UInt8]) -> Bool {
        HMACSHA256.secretsEqual(Array(secret.utf8), candidate)
    }

    /// Whether the token grants `scope`.
    public func grants(_ scope: Scope) -> Bool { scopes.contains(scope) || scopes.contains(.admin) }

    /// Parses `NAME:SCOPES:SECRET`, SCOPES separated by `,` or `+` (e.g. `ci:read,write:s3cret`).
    /// - Throws: a message naming what is wrong.
    public init(parsing text: String) throws(TokenError) {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty else {
            throw TokenError("token '\(Self.redacted(text))' must be NAME:SCOPES:SECRET, e.g. ci:read,write:s3cret")
        }
        var scopes: Set<Scope> = []
        for word in parts[1].split(whereSeparator: { $0 == "," || $0 == "+" }) {
            guard let scope = Scope(rawValue: String(word)) else {
                throw TokenError("token '\(parts[0])': unknown scope '\(word)' (scopes: read, write, admin)")
            }
            scopes.insert(scope)
        }
        guard !scopes.isEmpty else { throw TokenError("token '\(parts[0])' has no scope (scopes: read, write, admin)") }
        guard parts[2].count >= 8 else { throw TokenError("token '\(parts[0])': the secret must have at least 8 characters") }
        self.init(name: String(parts[0]), scopes: scopes, secret: String(parts[2]))
    }

    /// Parses a token file: one `NAME:SCOPES:SECRET` per line; blank lines and `#` comments are skipped.
    public static func parseFile(_ text: String) throws(TokenError) -> [AccessToken] {
        var tokens: [AccessToken] = []
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            do {
                tokens.append(try AccessToken(parsing: trimmed))
            } catch {
                throw TokenError("line \(number + 1): \(error.message)")
            }
        }
        return tokens
    }

    private static func redacted(_ text: String) -> String {
        text.split(separator: ":").first.map { String($0) + ":…" } ?? "…"
    }
}

/// A malformed token specification.
public struct TokenError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// Creates an error.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
