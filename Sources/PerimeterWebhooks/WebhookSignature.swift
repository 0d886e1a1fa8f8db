import PerimeterCrypto
import Foundation

/// The `Perimeter-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
///
/// Receivers recompute the MAC over the timestamp, a dot and the raw body bytes, compare in constant
/// time, and reject timestamps too far from their clock (replay protection). See docs/webhooks.md.
public struct WebhookSignature: Hashable, Sendable {
    /// The header name.
    public static let headerName = "Perimeter-Signature"

    /// Unix time (seconds) at signing.
    public var timestamp: Int64
    /// The lower-case hex MAC.
    public var mac: String

    /// Signs `body` with `secret` at `timestamp`.
    public init(body: [UInt8], secret: String, timestamp: Int64) {
        self.timestamp = timestamp
        self.mac = HMACSHA256.hex(HMACSHA256.authenticationCode(for: Self.signedBytes(body: body, timestamp: timestamp),
                                                                key: Array(secret.utf8)))
    }

    /// The header value: `t=1700000000,v1=5f…`.
    public var headerValue: String { "t=\(timestamp),v1=\(mac)" }

    /// The bytes that are signed: `"<t>." + body`.
    public static func signedBytes(body: [UInt8], timestamp: Int64) -> [UInt8] {
        Array("\(timestamp).".utf8) + body
    }

    /// Parses a header value; `nil` when it has no `t=` or no `v1=` part.
    public init?(headerValue: String) {
        var timestamp: Int64?
        var mac: String?
        for part in headerValue.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2 else { continue }
            let key = pieces[0].trimmingCharacters(in: .whitespaces)
            let value = pieces[1].trimmingCharacters(in: .whitespaces)
            if key == "t" { timestamp = Int64(value) } else if key == "v1", mac == nil { mac = value.lowercased() }
        }
        guard let timestamp, let mac else { return nil }
        self.timestamp = timestamp
        self.mac = mac
    }

    /// Whether `headerValue` is a valid signature of `body` under `secret`, made within `tolerance`
    /// seconds of `now`.
    public static func verify(headerValue: String, body: [UInt8], secret: String, now: Date = Date(),
                              tolerance: TimeInterval = 300) -> Bool {
        guard let received = WebhookSignature(headerValue: headerValue) else { return false }
        guard abs(now.timeIntervalSince1970 - Double(received.timestamp)) <= tolerance else { return false }
        let expected = WebhookSignature(body: body, secret: secret, timestamp: received.timestamp)
        return HMACSHA256.constantTimeEquals(Array(expected.mac.utf8), Array(received.mac.utf8))
    }
}
