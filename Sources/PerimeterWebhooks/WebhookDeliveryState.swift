import Foundation

/// The durable delivery progress of one webhook: cursor, the attempt in flight, counters.
public struct WebhookDeliveryState: Hashable, Sendable {
    /// The sequence of the last log event that is done with (delivered, skipped by the filter, or
    /// dead-lettered). Delivery resumes after it.
    public var cursor: Int64
    /// The event being retried, if any.
    public var pending: PendingDelivery?
    /// Counters.
    public var counters: WebhookCounters

    /// Creates a state.
    public init(cursor: Int64, pending: PendingDelivery? = nil, counters: WebhookCounters = WebhookCounters()) {
        self.cursor = cursor
        self.pending = pending
        self.counters = counters
    }
}

/// An event whose delivery has failed at least once and is scheduled for another attempt.
public struct PendingDelivery: Hashable, Sendable {
    /// The event's log sequence.
    public var sequence: Int64
    /// Whether it is a redriven dead letter (the cursor does not move when it is done).
    public var isRedrive: Bool
    /// Attempts made so far.
    public var attempts: Int
    /// When the first attempt was made (the retry window counts from here).
    public var firstAttemptAt: Date
    /// When the next attempt is due.
    public var nextAttemptAt: Date
    /// Why the last attempt failed.
    public var lastError: String

    /// Creates a pending delivery.
    public init(sequence: Int64, isRedrive: Bool, attempts: Int, firstAttemptAt: Date, nextAttemptAt: Date,
                lastError: String) {
        self.sequence = sequence
        self.isRedrive = isRedrive
        self.attempts = attempts
        self.firstAttemptAt = firstAttemptAt
        self.nextAttemptAt = nextAttemptAt
        self.lastError = lastError
    }
}

/// Per-webhook counters (persisted with the cursor, so they survive restarts).
public struct WebhookCounters: Hashable, Sendable {
    /// Events delivered (2xx), including redriven ones.
    public var delivered: Int64 = 0
    /// Failed attempts (non-2xx, timeouts, connection errors).
    public var failedAttempts: Int64 = 0
    /// Events moved to the dead-letter list.
    public var deadLettered: Int64 = 0
    /// The last failure's description.
    public var lastError: String?
    /// When the last failure happened.
    public var lastErrorAt: Date?
    /// When the last delivery succeeded.
    public var lastSuccessAt: Date?

    /// Zero counters.
    public init() {}
}

/// An event that could not be delivered within the retry window.
public struct DeadLetter: Hashable, Sendable {
    /// The event's log sequence.
    public var sequence: Int64
    /// The event id (the `Idempotency-Key` and CloudEvents `id`).
    public var eventID: String
    /// Attempts made.
    public var attempts: Int
    /// When the first attempt was made.
    public var firstAttemptAt: Date
    /// When it was dead-lettered.
    public var failedAt: Date
    /// Why the last attempt failed.
    public var lastError: String
    /// Whether a redrive was requested and is not finished yet.
    public var redriveRequested: Bool

    /// Creates a dead letter.
    public init(sequence: Int64, eventID: String, attempts: Int, firstAttemptAt: Date, failedAt: Date,
                lastError: String, redriveRequested: Bool = false) {
        self.sequence = sequence
        self.eventID = eventID
        self.attempts = attempts
        self.firstAttemptAt = firstAttemptAt
        self.failedAt = failedAt
        self.lastError = lastError
        self.redriveRequested = redriveRequested
    }
}
