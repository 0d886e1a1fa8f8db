import Foundation

/// A registered webhook: where to POST, which events, and the secret that signs them.
public struct WebhookRegistration: Hashable, Sendable {
    /// Unique id (`wh_` + 24 hex digits when generated).
    public var id: String
    /// The target: an `http://` URL.
    public var url: String
    /// Which events are sent.
    public var filter: WebhookFilter
    /// The HMAC-SHA256 key of the `Perimeter-Signature` header (never returned by the API).
    public var secret: String
    /// When it was registered.
    public var createdAt: Date

    /// Creates a registration.
    public init(id: String, url: String, filter: WebhookFilter = WebhookFilter(), secret: String, createdAt: Date) {
        self.id = id
        self.url = url
        self.filter = filter
        self.secret = secret
        self.createdAt = createdAt
    }
}
