import PerimeterGeoJSON

/// A webhook as the API reports it: registration (without the secret in JSON), progress, counters.
public struct WebhookStatus: Hashable, Sendable {
    /// The registration.
    public var registration: WebhookRegistration
    /// The sequence of the last log event done with.
    public var cursor: Int64
    /// Log events after the cursor not examined yet (an upper bound on matching events still to send).
    public var backlog: Int64
    /// The event being retried, if any.
    public var inFlight: PendingDelivery?
    /// How many dead letters the webhook has.
    public var deadLetters: Int
    /// Counters.
    public var counters: WebhookCounters

    /// Creates a status.
    public init(registration: WebhookRegistration, cursor: Int64, backlog: Int64, inFlight: PendingDelivery?,
                deadLetters: Int, counters: WebhookCounters) {
        self.registration = registration
        self.cursor = cursor
        self.backlog = backlog
        self.inFlight = inFlight
        self.deadLetters = deadLetters
        self.counters = counters
    }

    /// `{"id","url","filter","createdAt","cursor","counters":{…},"inFlight":{…}|null}` (no secret).
    public var json: JSONValue {
        guard case .object(var object) = WebhookJSON.registration(registration) else { return .null }
        object["cursor"] = .integer(cursor)
        object["counters"] = WebhookJSON.counters(counters, backlog: backlog, inFlight: inFlight != nil, deadLetters: deadLetters)
        if let p = inFlight {
            object["inFlight"] = .object([
                "sequence": .integer(p.sequence), "attempts": .integer(Int64(p.attempts)), "redrive": .bool(p.isRedrive),
                "firstAttemptAt": .string(RFC3339.string(from: p.firstAttemptAt)),
                "nextAttemptAt": .string(RFC3339.string(from: p.nextAttemptAt)), "lastError": .string(p.lastError),
            ])
        } else {
            object["inFlight"] = .null
        }
        return .object(object)
    }
}
