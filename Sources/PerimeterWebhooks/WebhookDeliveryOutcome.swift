/// What one delivery attempt came to, as reported to the dispatcher's outcome observer (for
/// server-wide metrics such as `perimeter_webhook_deliveries_total{outcome}`).
public enum WebhookDeliveryOutcome: String, Hashable, Sendable, CaseIterable {
    /// The receiver answered 2xx.
    case delivered
    /// The attempt failed (non-2xx, timeout, connection error); another attempt is scheduled.
    case failed
    /// The attempt failed and the retry window is over: the event became a dead letter.
    case dead
}
