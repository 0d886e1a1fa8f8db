import Synchronization

/// A ``WebhookStore`` in memory: nothing survives the process. For tests and ephemeral servers.
public final class InMemoryWebhookStore: WebhookStore {
    private struct Contents {
        var order: [String] = []
        var webhooks: [String: StoredWebhook] = [:]
        var deadLetters: [String: [Int64: DeadLetter]] = [:]
    }

    private let contents = Mutex(Contents())

    /// An empty store.
    public init() {}

    /// Every webhook, in registration order. - Complexity: O(n).
    public func webhooks() throws(WebhookError) -> [StoredWebhook] {
        contents.withLock { c in c.order.compactMap { c.webhooks[$0] } }
    }

    /// The webhook with `id`, or `nil`.
    public func webhook(id: String) throws(WebhookError) -> StoredWebhook? {
        contents.withLock { $0.webhooks[id] }
    }

    /// Adds a webhook. - Throws: ``WebhookError/Code/conflict`` when the id exists.
    public func insert(_ registration: WebhookRegistration, state: WebhookDeliveryState) throws(WebhookError) {
        try contents.withLock { (c: inout Contents) throws(WebhookError) in
            guard c.webhooks[registration.id] == nil else {
                throw WebhookError(.conflict, "a webhook with id \(registration.id) already exists", field: "id")
            }
            c.order.append(registration.id)
            c.webhooks[registration.id] = StoredWebhook(registration: registration, state: state)
            c.deadLetters[registration.id] = [:]
        }
    }

    /// Removes a webhook with its state and dead letters.
    public func delete(id: String) throws(WebhookError) -> Bool {
        contents.withLock { c in
            guard c.webhooks.removeValue(forKey: id) != nil else { return false }
            c.order.removeAll { $0 == id }
            c.deadLetters[id] = nil
            return true
        }
    }

    /// Replaces the delivery state.
    public func save(_ state: WebhookDeliveryState, for id: String) throws(WebhookError) {
        try update(id) { c in c.webhooks[id]?.state = state }
    }

    /// Adds or replaces a dead letter and replaces the state.
    public func save(_ state: WebhookDeliveryState, for id: String, deadLetter: DeadLetter) throws(WebhookError) {
        try update(id) { c in
            c.webhooks[id]?.state = state
            c.deadLetters[id, default: [:]][deadLetter.sequence] = deadLetter
        }
    }

    /// Removes a dead letter and replaces the state.
    public func save(_ state: WebhookDeliveryState, for id: String, removingDeadLetter sequence: Int64) throws(WebhookError) {
        try update(id) { c in
            c.webhooks[id]?.state = state
            c.deadLetters[id]?[sequence] = nil
        }
    }

    /// Dead letters after `sequence`, in order. - Complexity: O(d log d) for d dead letters.
    public func deadLetters(for id: String, after sequence: Int64, limit: Int) throws(WebhookError) -> [DeadLetter] {
        contents.withLock { c in
            let letters = (c.deadLetters[id] ?? [:]).values.filter { $0.sequence > sequence }
            return Array(letters.sorted { $0.sequence < $1.sequence }.prefix(max(0, limit)))
        }
    }

    /// How many dead letters the webhook has.
    public func deadLetterCount(for id: String) throws(WebhookError) -> Int {
        contents.withLock { $0.deadLetters[id]?.count ?? 0 }
    }

    /// Marks dead letters for redrive.
    public func requestRedrive(for id: String, sequences: [Int64]?) throws(WebhookError) -> Int {
        try update(id) { c in
            var marked = 0
            let wanted = sequences.map(Set.init)
            for (sequence, letter) in c.deadLetters[id] ?? [:] where wanted?.contains(sequence) ?? true {
                if !letter.redriveRequested { c.deadLetters[id]?[sequence]?.redriveRequested = true }
                marked += 1
            }
            return marked
        }
    }

    /// The lowest dead letter marked for redrive.
    public func nextRedrive(for id: String) throws(WebhookError) -> DeadLetter? {
        contents.withLock { c in
            (c.deadLetters[id] ?? [:]).values.filter(\.redriveRequested).min { $0.sequence < $1.sequence }
        }
    }

    private func update<T>(_ id: String, _ body: (inout Contents) -> T) throws(WebhookError) -> T {
        try contents.withLock { (c: inout Contents) throws(WebhookError) -> T in
            guard c.webhooks[id] != nil else { throw WebhookError(.notFound, "no webhook with id \(id)") }
            return body(&c)
        }
    }
}
