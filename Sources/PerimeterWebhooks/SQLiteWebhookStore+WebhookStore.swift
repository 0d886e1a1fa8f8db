import PerimeterGeoJSON
import PerimeterService
import PerimeterSQLite

/// The durable ``WebhookStore``: registration and state as JSON documents in the SQLite webhook file.
extension SQLiteWebhookStore: WebhookStore {
    /// Every webhook, in registration order.
    public func webhooks() throws(WebhookError) -> [StoredWebhook] {
        var result: [StoredWebhook] = []
        for record in try storage({ () throws(GeofencingError) in try webhookRecords() }) {
            result.append(try Self.decode(record))
        }
        return result
    }

    /// The webhook with `id`, or `nil`.
    public func webhook(id: String) throws(WebhookError) -> StoredWebhook? {
        guard let record = try storage({ () throws(GeofencingError) in try webhookRecord(id: id) }) else { return nil }
        return try Self.decode(record)
    }

    /// Adds a webhook. - Throws: ``WebhookError/Code/conflict`` when the id exists.
    public func insert(_ registration: WebhookRegistration, state: WebhookDeliveryState) throws(WebhookError) {
        let record = WebhookRecord(id: registration.id,
                                   registration: Self.text(WebhookJSON.registration(registration, includeSecret: true)),
                                   state: Self.text(WebhookJSON.storedState(state)))
        guard try storage({ () throws(GeofencingError) in try insertWebhookRecord(record) }) else {
            throw WebhookError(.conflict, "a webhook with id \(registration.id) already exists", field: "id")
        }
    }

    /// Removes a webhook with its state and dead letters.
    public func delete(id: String) throws(WebhookError) -> Bool {
        try storage { () throws(GeofencingError) in try deleteWebhookRecord(id: id) }
    }

    /// Replaces the delivery state.
    public func save(_ state: WebhookDeliveryState, for id: String) throws(WebhookError) {
        try update(id, state, deadLetter: nil, removing: nil)
    }

    /// Adds or replaces a dead letter and replaces the state, in one transaction.
    public func save(_ state: WebhookDeliveryState, for id: String, deadLetter: DeadLetter) throws(WebhookError) {
        let record = DeadLetterRecord(sequence: deadLetter.sequence, redrive: deadLetter.redriveRequested,
                                      letter: Self.text(WebhookJSON.storedDeadLetter(deadLetter)))
        try update(id, state, deadLetter: record, removing: nil)
    }

    /// Removes a dead letter and replaces the state, in one transaction.
    public func save(_ state: WebhookDeliveryState, for id: String, removingDeadLetter sequence: Int64) throws(WebhookError) {
        try update(id, state, deadLetter: nil, removing: sequence)
    }

    /// Dead letters after `sequence`, in order.
    public func deadLetters(for id: String, after sequence: Int64, limit: Int) throws(WebhookError) -> [DeadLetter] {
        let records = try storage { () throws(GeofencingError) in
            try deadLetterRecords(webhook: id, after: sequence, limit: limit)
        }
        var letters: [DeadLetter] = []
        for record in records { letters.append(try Self.decode(record)) }
        return letters
    }

    /// How many dead letters the webhook has.
    public func deadLetterCount(for id: String) throws(WebhookError) -> Int {
        try storage { () throws(GeofencingError) in try deadLetterRecordCount(webhook: id) }
    }

    /// Marks dead letters for redrive.
    public func requestRedrive(for id: String, sequences: [Int64]?) throws(WebhookError) -> Int {
        guard try webhook(id: id) != nil else { throw WebhookError(.notFound, "no webhook with id \(id)") }
        return try storage { () throws(GeofencingError) in try markDeadLetterRecordsForRedrive(webhook: id, sequences: sequences) }
    }

    /// The lowest dead letter marked for redrive.
    public func nextRedrive(for id: String) throws(WebhookError) -> DeadLetter? {
        let records = try storage { () throws(GeofencingError) in
            try deadLetterRecords(webhook: id, after: Int64.min, limit: 1, redriveOnly: true)
        }
        return try records.first.map { (record) throws(WebhookError) in try Self.decode(record) }
    }

    // MARK: Helpers

    private func update(_ id: String, _ state: WebhookDeliveryState, deadLetter: DeadLetterRecord?,
                        removing: Int64?) throws(WebhookError) {
        let text = Self.text(WebhookJSON.storedState(state))
        let found = try storage { () throws(GeofencingError) in
            try updateWebhookState(id: id, state: text, deadLetter: deadLetter, removingDeadLetter: removing)
        }
        guard found else { throw WebhookError(.notFound, "no webhook with id \(id)") }
    }

    private func storage<T>(_ body: () throws(GeofencingError) -> T) throws(WebhookError) -> T {
        do {
            return try body()
        } catch {
            throw WebhookError(.storageFailure, error.message)
        }
    }

    private static func text(_ value: JSONValue) -> String { JSONWriter().string(value) }

    private static func parse(_ text: String, what: String) throws(WebhookError) -> JSONValue {
        do {
            return try JSONParser().parse(text)
        } catch {
            throw WebhookError(.storageFailure, "a stored \(what) is not valid JSON (\(error)); the webhook database is damaged")
        }
    }

    private static func decode(_ record: WebhookRecord) throws(WebhookError) -> StoredWebhook {
        StoredWebhook(registration: try WebhookJSON.storedRegistration(try parse(record.registration, what: "registration")),
                      state: try WebhookJSON.storedState(try parse(record.state, what: "delivery state")))
    }

    private static func decode(_ record: DeadLetterRecord) throws(WebhookError) -> DeadLetter {
        try WebhookJSON.storedDeadLetter(try parse(record.letter, what: "dead letter"), redrive: record.redrive)
    }
}
