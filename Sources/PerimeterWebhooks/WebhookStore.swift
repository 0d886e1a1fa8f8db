/// A registration together with its delivery progress.
public struct StoredWebhook: Hashable, Sendable {
    /// The registration.
    public var registration: WebhookRegistration
    /// Its delivery progress.
    public var state: WebhookDeliveryState

    /// Creates a stored webhook.
    public init(registration: WebhookRegistration, state: WebhookDeliveryState) {
        self.registration = registration
        self.state = state
    }
}

/// Where webhooks live: registrations, each one's delivery cursor, attempt in flight and counters, and
/// the dead letters. Every method is atomic; implementations are safe to share between threads.
///
/// Implementations: ``InMemoryWebhookStore`` (tests, ephemeral servers) and ``SQLiteWebhookStore``
/// (durable, on PerimeterSQLite).
public protocol WebhookStore: Sendable {
    /// Every webhook, in registration order.
    func webhooks() throws(WebhookError) -> [StoredWebhook]
    /// The webhook with `id`, or `nil`.
    func webhook(id: String) throws(WebhookError) -> StoredWebhook?
    /// Adds a webhook. - Throws: ``WebhookError/Code/conflict`` when the id exists.
    func insert(_ registration: WebhookRegistration, state: WebhookDeliveryState) throws(WebhookError)
    /// Removes a webhook with its state and dead letters; `false` when there was none.
    func delete(id: String) throws(WebhookError) -> Bool
    /// Replaces the delivery state. - Throws: ``WebhookError/Code/notFound`` when the webhook is gone.
    func save(_ state: WebhookDeliveryState, for id: String) throws(WebhookError)
    /// Adds or replaces `deadLetter` (by sequence) and replaces the state, in one transaction.
    func save(_ state: WebhookDeliveryState, for id: String, deadLetter: DeadLetter) throws(WebhookError)
    /// Removes the dead letter at `sequence` and replaces the state, in one transaction.
    func save(_ state: WebhookDeliveryState, for id: String, removingDeadLetter sequence: Int64) throws(WebhookError)
    /// Up to `limit` dead letters with a sequence above `sequence`, in sequence order.
    func deadLetters(for id: String, after sequence: Int64, limit: Int) throws(WebhookError) -> [DeadLetter]
    /// How many dead letters the webhook has.
    func deadLetterCount(for id: String) throws(WebhookError) -> Int
    /// Marks the dead letters at `sequences` (all of them when `nil`) for redrive; returns how many
    /// were marked. - Throws: ``WebhookError/Code/notFound`` when the webhook is gone.
    func requestRedrive(for id: String, sequences: [Int64]?) throws(WebhookError) -> Int
    /// The dead letter with the lowest sequence among those marked for redrive, or `nil`.
    func nextRedrive(for id: String) throws(WebhookError) -> DeadLetter?
}
