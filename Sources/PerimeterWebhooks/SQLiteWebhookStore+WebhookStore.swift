import Foundation
import PerimeterFences
import PerimeterService
import PerimeterSQLite

/// The durable ``WebhookStore``: the model, field by field, in the typed columns of the SQLite webhook
/// file (docs/webhooks.md, "Storage").
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
        let f = registration.filter
        let record = WebhookRecord(id: registration.id, url: registration.url, secret: registration.secret,
                                   createdAt: registration.createdAt.timeIntervalSince1970,
                                   filter: FilterRecord(devices: Array(f.devices), fences: Array(f.fences), groups: Array(f.groups),
                                                        types: f.types.map(\.rawValue)),
                                   state: Self.record(state))
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
        let record = DeadLetterRecord(sequence: deadLetter.sequence, eventID: deadLetter.eventID, attempts: Int64(deadLetter.attempts),
                                      firstAttemptAt: deadLetter.firstAttemptAt.timeIntervalSince1970,
                                      failedAt: deadLetter.failedAt.timeIntervalSince1970, lastError: deadLetter.lastError,
                                      redrive: deadLetter.redriveRequested)
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
        return records.map(Self.deadLetter)
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
        return records.first.map(Self.deadLetter)
    }

    // MARK: Helpers

    private func update(_ id: String, _ state: WebhookDeliveryState, deadLetter: DeadLetterRecord?,
                        removing: Int64?) throws(WebhookError) {
        let record = Self.record(state)
        let found = try storage { () throws(GeofencingError) in
            try updateWebhookState(id: id, state: record, deadLetter: deadLetter, removingDeadLetter: removing)
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

    private static func record(_ state: WebhookDeliveryState) -> StateRecord {
        let c = state.counters
        return StateRecord(cursor: state.cursor, delivered: c.delivered, failedAttempts: c.failedAttempts, deadLettered: c.deadLettered,
                           lastError: c.lastError, lastErrorAt: c.lastErrorAt?.timeIntervalSince1970,
                           lastSuccessAt: c.lastSuccessAt?.timeIntervalSince1970,
                           pending: state.pending.map { p in
                               PendingRecord(sequence: p.sequence, redrive: p.isRedrive, attempts: Int64(p.attempts),
                                             firstAttemptAt: p.firstAttemptAt.timeIntervalSince1970,
                                             nextAttemptAt: p.nextAttemptAt.timeIntervalSince1970, lastError: p.lastError)
                           })
    }

    private static func decode(_ record: WebhookRecord) throws(WebhookError) -> StoredWebhook {
        var types: Set<GeofenceEventKind> = []
        for name in record.filter.types {
            guard let kind = GeofenceEventKind(rawValue: name) else {
                throw WebhookError(.storageFailure, "webhook \(record.id) filters on the unknown event type \"\(name)\"; the webhook database was written by a newer Perimeter or is damaged")
            }
            types.insert(kind)
        }
        let filter = WebhookFilter(devices: Set(record.filter.devices), fences: Set(record.filter.fences),
                                   groups: Set(record.filter.groups), types: types)
        let registration = WebhookRegistration(id: record.id, url: record.url, filter: filter, secret: record.secret,
                                               createdAt: Date(timeIntervalSince1970: record.createdAt))
        let s = record.state
        var counters = WebhookCounters()
        counters.delivered = s.delivered
        counters.failedAttempts = s.failedAttempts
        counters.deadLettered = s.deadLettered
        counters.lastError = s.lastError
        counters.lastErrorAt = s.lastErrorAt.map(Date.init(timeIntervalSince1970:))
        counters.lastSuccessAt = s.lastSuccessAt.map(Date.init(timeIntervalSince1970:))
        let pending = s.pending.map { p in
            PendingDelivery(sequence: p.sequence, isRedrive: p.redrive, attempts: Int(p.attempts),
                            firstAttemptAt: Date(timeIntervalSince1970: p.firstAttemptAt),
                            nextAttemptAt: Date(timeIntervalSince1970: p.nextAttemptAt), lastError: p.lastError)
        }
        return StoredWebhook(registration: registration, state: WebhookDeliveryState(cursor: s.cursor, pending: pending, counters: counters))
    }

    private static func deadLetter(_ record: DeadLetterRecord) -> DeadLetter {
        DeadLetter(sequence: record.sequence, eventID: record.eventID, attempts: Int(record.attempts),
                   firstAttemptAt: Date(timeIntervalSince1970: record.firstAttemptAt),
                   failedAt: Date(timeIntervalSince1970: record.failedAt), lastError: record.lastError,
                   redriveRequested: record.redrive)
    }
}
