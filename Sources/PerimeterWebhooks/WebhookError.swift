/// The error of the webhook API: a ``Code`` to branch on (and map to an HTTP status) and a message a
/// person can act on.
public struct WebhookError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// A field of a registration is not valid (HTTP 400/422); ``WebhookError/field`` says which.
        case invalidArgument
        /// No webhook (or dead letter) with that id (HTTP 404).
        case notFound
        /// A webhook with that id already exists (HTTP 409).
        case conflict
        /// The target resolves to a loopback, private or link-local address and private targets are
        /// not allowed (HTTP 422), or it cannot be resolved.
        case targetRefused
        /// The webhook store failed (HTTP 500/503).
        case storageFailure
        /// The HTTP delivery failed (connect, timeout, malformed response); recorded as a failed attempt.
        case transport
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and what to do about it.
    public var message: String
    /// The JSON field concerned (`url`, `filter.types[1]`, …), if any.
    public var field: String?

    /// Creates an error.
    public init(_ code: Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    /// `targetRefused: …`
    public var description: String { "\(code.rawValue): \(message)" }
}
