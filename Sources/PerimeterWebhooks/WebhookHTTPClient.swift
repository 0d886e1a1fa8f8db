import Foundation
import PerimeterHTTPClient
import Synchronization

/// What a webhook POST needs: target, headers and body in; the status code out.
public protocol WebhookTransport: Sendable {
    /// POSTs `body` with `headers` to `target` and returns the response status code.
    /// - Throws: ``WebhookError/Code/targetRefused`` (SSRF guard, unresolvable host) or
    ///   ``WebhookError/Code/transport`` (connect, TLS, timeout, malformed response).
    func post(to target: WebhookTarget, headers: [(String, String)], body: [UInt8]) throws(WebhookError) -> Int
}

/// The files of webhook TLS: extra trusted CAs, and a client certificate for receivers that demand
/// mutual TLS (`perimeter serve --webhook-ca`, `--webhook-client-cert`, `--webhook-client-key`).
/// Receivers' certificates are always verified, chain and host name, against the system's CAs plus
/// ``trustedCAFile``.
public struct WebhookTLS: Hashable, Sendable {
    /// PEM certificates of CAs to trust besides the system's (for receivers with a private CA).
    public var trustedCAFile: String?
    /// PEM client certificate presented to every https receiver that asks for one.
    public var clientCertificateFile: String?
    /// Its PEM private key (unencrypted); `nil` when the certificate file holds the key.
    public var clientKeyFile: String?

    /// Creates settings; by default the system's CAs only and no client certificate.
    public init(trustedCAFile: String? = nil, clientCertificateFile: String? = nil, clientKeyFile: String? = nil) {
        self.trustedCAFile = trustedCAFile
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
    }
}

/// The webhook HTTP client, on libcurl: `http://` and `https://` (TLS verified against the system's CAs
/// plus ``WebhookTLS/trustedCAFile``; optional client certificate), HTTP/1.1 with keep-alive.
///
/// Every request first resolves the target's host and checks each address with the SSRF guard
/// (``TargetAddressPolicy``); libcurl then connects only to those addresses (no second lookup, so DNS
/// rebinding cannot slip a private address in), follows no redirects and uses no proxy, not even one
/// named by the environment.
///
/// Connections stay open between requests: the client keeps idle libcurl sessions per receiver origin
/// (scheme, host, port), and a webhook's worker, which sends one request at a time, takes the same
/// session back each time. A failure says why, TLS problems by name (certificate not trusted, name
/// mismatch, expired, handshake refused, …), in the error's message, which the worker records as the
/// webhook's `lastError` and in its dead letters.
public final class WebhookHTTPClient: WebhookTransport {
    /// The SSRF guard applied before connecting.
    public let policy: TargetAddressPolicy
    /// How long connecting (TCP and TLS handshake) may take, in seconds.
    public let connectTimeout: TimeInterval
    /// How long a whole attempt may take, connecting included, until the status line and headers
    /// are in, in seconds.
    public let responseTimeout: TimeInterval
    /// The TLS files in use.
    public let tls: WebhookTLS
    private let sessionConfiguration: HTTPClientConfiguration
    private let idle = Mutex<[String: [HTTPClientSession]]>([:])

    /// Idle sessions kept per origin (more are closed): one per worker posting there at the same time.
    static let idleSessionsPerOrigin = 8
    /// Origins whose idle sessions are kept.
    static let idleOrigins = 256

    /// Creates a client that trusts the system's CAs and presents no client certificate.
    public convenience init(policy: TargetAddressPolicy = TargetAddressPolicy(), connectTimeout: TimeInterval = 5,
                            responseTimeout: TimeInterval = 10) {
        self.init(policy: policy, connectTimeout: connectTimeout, responseTimeout: responseTimeout,
                  configuration: HTTPClientConfiguration(connectTimeout: connectTimeout, timeout: responseTimeout,
                                                         userAgent: "Perimeter-Webhooks/1"),
                  tls: WebhookTLS())
    }

    /// Creates a client with TLS files; they are read and checked now.
    /// - Throws: ``WebhookError/Code/invalidArgument`` naming the file that is missing, unreadable or not
    ///   PEM, or a key given without a certificate.
    public convenience init(policy: TargetAddressPolicy = TargetAddressPolicy(), connectTimeout: TimeInterval = 5,
                            responseTimeout: TimeInterval = 10, tls: WebhookTLS) throws(WebhookError) {
        let loaded: HTTPClientTLS
        do {
            loaded = try HTTPClientTLS(additionalCAFile: tls.trustedCAFile, clientCertificateFile: tls.clientCertificateFile,
                                       clientKeyFile: tls.clientKeyFile)
        } catch {
            throw WebhookError(.invalidArgument, "webhook TLS: \(error.detail)")
        }
        self.init(policy: policy, connectTimeout: connectTimeout, responseTimeout: responseTimeout,
                  configuration: HTTPClientConfiguration(connectTimeout: connectTimeout, timeout: responseTimeout,
                                                         userAgent: "Perimeter-Webhooks/1", tls: loaded),
                  tls: tls)
    }

    private init(policy: TargetAddressPolicy, connectTimeout: TimeInterval, responseTimeout: TimeInterval,
                 configuration: HTTPClientConfiguration, tls: WebhookTLS) {
        self.policy = policy
        self.connectTimeout = connectTimeout
        self.responseTimeout = responseTimeout
        self.sessionConfiguration = configuration
        self.tls = tls
    }

    /// POSTs and returns the status code (any status; the caller decides what acknowledges).
    public func post(to target: WebhookTarget, headers: [(String, String)], body: [UInt8]) throws(WebhookError) -> Int {
        try exchange(to: target, headers: headers, body: body).status
    }

    /// POSTs and returns the status and whether a kept-alive connection carried the request.
    func exchange(to target: WebhookTarget, headers: [(String, String)], body: [UInt8]) throws(WebhookError) -> HTTPClientResponse {
        for (name, value) in headers {
            let clean = { (text: String) in text.unicodeScalars.allSatisfy { $0 != "\r" && $0 != "\n" } }
            guard clean(name), clean(value), !name.isEmpty, !name.contains(":") else {
                throw WebhookError(.invalidArgument, "header \(name) contains a line break or is not a valid field name")
            }
        }
        let addresses = try policy.resolve(target)
        let origin = "\(target.scheme)://\(target.hostHeader)"
        let session = try checkOut(origin)
        defer { checkIn(session, origin) }
        do {
            return try session.post(url: target.requestURL, host: target.host, port: target.port,
                                    addresses: addresses.map(\.text), headers: headers, body: body)
        } catch {
            throw WebhookError(.transport, Self.describe(error, origin: origin, timeout: responseTimeout))
        }
    }

    /// The message of a failed attempt: where, why, and what to do when the fix is on our side.
    static func describe(_ failure: HTTPClientFailure, origin: String, timeout: TimeInterval) -> String {
        var text = "\(origin): \(failure.summary)"
        if failure.kind == .timeout { text += " (no response within \(timeout) s)" }
        if !failure.detail.isEmpty { text += ": \(failure.detail)" }
        switch failure.kind {
        case .certificateNotTrusted:
            text += "; if the receiver uses a private CA, trust it with --webhook-ca"
        case .certificateNameMismatch:
            text += "; the URL's host must be one the certificate names"
        case .tlsHandshakeFailed where failure.detail.lowercased().contains("certificate"):
            text += "; if the receiver demands a client certificate, give one with --webhook-client-cert"
        default:
            break
        }
        return text
    }

    private func checkOut(_ origin: String) throws(WebhookError) -> HTTPClientSession {
        if let reused = idle.withLock({ $0[origin]?.popLast() }) { return reused }
        do {
            return try HTTPClientSession(configuration: sessionConfiguration)
        } catch {
            throw WebhookError(.transport, "\(origin): \(error.description)")
        }
    }

    private func checkIn(_ session: HTTPClientSession, _ origin: String) {
        let dropped = idle.withLock { sessions -> [HTTPClientSession] in
            var dropped: [HTTPClientSession] = []
            // Receivers come and go with registrations: past a bound, the other origins' idle sessions
            // (and their connections) are closed rather than kept for ever.
            if sessions[origin] == nil && sessions.count >= Self.idleOrigins {
                dropped = sessions.values.flatMap { $0 }
                sessions.removeAll()
            }
            if sessions[origin, default: []].count < Self.idleSessionsPerOrigin {
                sessions[origin, default: []].append(session)
            } else {
                dropped.append(session)
            }
            return dropped
        }
        _ = dropped  // closed here, outside the lock
    }
}
