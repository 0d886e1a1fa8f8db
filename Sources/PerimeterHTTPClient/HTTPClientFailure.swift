/// Why an HTTP client request failed, classified from libcurl's result code, its error buffer and, for
/// certificate problems, OpenSSL's verification result.
public struct HTTPClientFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// The class of failure.
    public enum Kind: String, Hashable, Sendable {
        /// The TLS peer's certificate chain does not lead to a trusted CA (self-signed, unknown issuer).
        case certificateNotTrusted
        /// The peer's certificate names neither the host name nor the address that was asked for.
        case certificateNameMismatch
        /// The peer's certificate (or one in its chain) has expired.
        case certificateExpired
        /// The peer's certificate (or one in its chain) is not valid yet.
        case certificateNotYetValid
        /// The peer's certificate failed verification for another reason (revoked, bad signature, …).
        case certificateInvalid
        /// The TLS handshake failed (no common protocol or cipher, the peer sent an alert, it wants a
        /// client certificate, …).
        case tlsHandshakeFailed
        /// The client certificate or key (mutual TLS) could not be used.
        case clientCertificate
        /// The trusted CA certificates could not be loaded.
        case caCertificates
        /// The attempt took longer than allowed.
        case timeout
        /// No connection could be made (refused, unreachable).
        case connectFailed
        /// The peer closed the connection without a response.
        case emptyResponse
        /// Sending the request or receiving the response failed mid-way.
        case connectionBroken
        /// The response is not HTTP/1.x.
        case malformedResponse
        /// A bad argument or a local problem (out of memory, an invalid option).
        case local
    }

    /// The class of failure.
    public var kind: Kind
    /// What happened, in words (libcurl's error buffer, or its description of the result code).
    public var detail: String

    /// Creates a failure.
    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The kind in a few words, e.g. "the server's certificate is not trusted".
    public var summary: String {
        switch kind {
        case .certificateNotTrusted: "the server's certificate is not trusted"
        case .certificateNameMismatch: "the server's certificate does not match the host name"
        case .certificateExpired: "the server's certificate has expired"
        case .certificateNotYetValid: "the server's certificate is not valid yet"
        case .certificateInvalid: "the server's certificate is invalid"
        case .tlsHandshakeFailed: "the TLS handshake failed"
        case .clientCertificate: "the client certificate or key cannot be used"
        case .caCertificates: "the trusted CA certificates cannot be loaded"
        case .timeout: "timeout"
        case .connectFailed: "cannot connect"
        case .emptyResponse: "the connection was closed without a response"
        case .connectionBroken: "the connection broke"
        case .malformedResponse: "malformed response"
        case .local: "local error"
        }
    }

    /// Whether the failure is about the TLS peer's certificate.
    public var isCertificateProblem: Bool {
        [.certificateNotTrusted, .certificateNameMismatch, .certificateExpired, .certificateNotYetValid,
         .certificateInvalid].contains(kind)
    }

    /// `summary (detail)`.
    public var description: String { detail.isEmpty ? summary : "\(summary) (\(detail))" }
}
