import PerimeterFences
import PerimeterSQLite

/// The ``WebhookStore`` operations, each one statement or one transaction on the typed tables; the
/// model's values are bound to and read from their columns directly.
extension SQLiteWebhookStore {
    /// Every webhook, in registration order. - Complexity: O(n + f) for n webhooks and f filter rows.
    public func webhooks() throws(WebhookError) -> [StoredWebhook] {
        try withDatabase("reading webhooks from") { db in
            var filters: [String: WebhookFilter] = [:]
            let criteria = try db.statement("SELECT webhook, member, value FROM webhook_filter")
            while try criteria.step() {
                let id = criteria.string(0)
                try Self.add(member: criteria.string(1), value: criteria.string(2), to: &filters[id, default: WebhookFilter()], of: id)
            }
            let statement = try db.statement("SELECT id, \(Self.webhookColumns) FROM webhook ORDER BY position")
            var webhooks: [StoredWebhook] = []
            while try statement.step() {
                let id = statement.string(0)
                webhooks.append(Self.webhook(id: id, statement, from: 1, filter: filters[id] ?? WebhookFilter()))
            }
            return webhooks
        }
    }

    /// The webhook with `id`, or `nil`.
    public func webhook(id: String) throws(WebhookError) -> StoredWebhook? {
        try withDatabase("reading a webhook from") { db in
            let criteria = try db.statement("SELECT member, value FROM webhook_filter WHERE webhook = ?1")
            criteria.bind(id, at: 1)
            var filter = WebhookFilter()
            while try criteria.step() {
                try Self.add(member: criteria.string(0), value: criteria.string(1), to: &filter, of: id)
            }
            let statement = try db.statement("SELECT \(Self.webhookColumns) FROM webhook WHERE id = ?1")
            statement.bind(id, at: 1)
            guard try statement.step() else { return nil }
            let webhook = Self.webhook(id: id, statement, from: 0, filter: filter)
            statement.reset()
            return webhook
        }
    }

    /// Adds a webhook with its filter, after every other. - Throws: ``WebhookError/Code/conflict``
    /// (nothing changed) when the id exists.
    public func insert(_ registration: WebhookRegistration, state: WebhookDeliveryState) throws(WebhookError) {
        try withDatabase("adding a webhook to", transaction: true) { db in
            guard try !Self.exists(registration.id, in: db) else {
                throw WebhookError(.conflict, "a webhook with id \(registration.id) already exists", field: "id")
            }
            let position = try db.integer("SELECT coalesce(max(position), 0) + 1 FROM webhook") ?? 1
            try Self.insert(registration, state: state, position: position, into: db)
        }
    }

    /// Removes a webhook with its filter and dead letters; `false` when there was none.
    public func delete(id: String) throws(WebhookError) -> Bool {
        try withDatabase("deleting a webhook from", transaction: true) { db in
            // Its webhook_filter and dead_letter rows go with it (ON DELETE CASCADE).
            let delete = try db.statement("DELETE FROM webhook WHERE id = ?1 RETURNING 1")
            delete.bind(id, at: 1)
            let existed = try delete.step()
            if existed { _ = try delete.step() }
            return existed
        }
    }

    /// Replaces the delivery state. - Throws: ``WebhookError/Code/notFound`` when the webhook is gone.
    public func save(_ state: WebhookDeliveryState, for id: String) throws(WebhookError) {
        try update(id, state) { _ in }
    }

    /// Adds or replaces `deadLetter` (by sequence) and replaces the state, in one transaction.
    public func save(_ state: WebhookDeliveryState, for id: String, deadLetter: DeadLetter) throws(WebhookError) {
        try update(id, state) { db in try Self.save(deadLetter, webhook: id, into: db) }
    }

    /// Removes the dead letter at `sequence` and replaces the state, in one transaction.
    public func save(_ state: WebhookDeliveryState, for id: String, removingDeadLetter sequence: Int64) throws(WebhookError) {
        try update(id, state) { db in
            let delete = try db.statement("DELETE FROM dead_letter WHERE webhook = ?1 AND sequence = ?2")
            delete.bind(id, at: 1)
            delete.bind(sequence, at: 2)
            try delete.execute()
        }
    }

    /// Up to `limit` dead letters with a sequence above `sequence`, in sequence order.
    public func deadLetters(for id: String, after sequence: Int64, limit: Int) throws(WebhookError) -> [DeadLetter] {
        try deadLetters(id, after: sequence, limit: limit, redriveOnly: false)
    }

    /// How many dead letters the webhook has.
    public func deadLetterCount(for id: String) throws(WebhookError) -> Int {
        try withDatabase("counting dead letters in") { db in
            let statement = try db.statement("SELECT count(*) FROM dead_letter WHERE webhook = ?1")
            statement.bind(id, at: 1)
            guard try statement.step() else { return 0 }
            let count = Int(statement.int64(0))
            statement.reset()
            return count
        }
    }

    /// Marks the dead letters at `sequences` (all of them when `nil`) for redrive; returns how many
    /// were marked. - Throws: ``WebhookError/Code/notFound`` when the webhook is gone.
    public func requestRedrive(for id: String, sequences: [Int64]?) throws(WebhookError) -> Int {
        try withDatabase("marking dead letters for redrive in", transaction: true) { db in
            guard try Self.exists(id, in: db) else { throw WebhookError(.notFound, "no webhook with id \(id)") }
            guard let sequences else {
                let all = try db.statement("UPDATE dead_letter SET redrive = 1 WHERE webhook = ?1 RETURNING 1")
                all.bind(id, at: 1)
                var count = 0
                while try all.step() { count += 1 }
                return count
            }
            let one = try db.statement("UPDATE dead_letter SET redrive = 1 WHERE webhook = ?1 AND sequence = ?2 RETURNING 1")
            var count = 0
            for sequence in Set(sequences) {
                one.reset()
                one.bind(id, at: 1)
                one.bind(sequence, at: 2)
                while try one.step() { count += 1 }
            }
            return count
        }
    }

    /// The dead letter with the lowest sequence among those marked for redrive, or `nil`.
    public func nextRedrive(for id: String) throws(WebhookError) -> DeadLetter? {
        try deadLetters(id, after: Int64.min, limit: 1, redriveOnly: true).first
    }

    // MARK: Rows ↔ model (shared with the migration from version 1)

    /// The columns of `webhook` after `id` that ``webhook(id:_:from:filter:)`` reads.
    static let webhookColumns = "url, secret, created_at, \(stateColumns)"

    /// The state columns of `webhook`, in the order ``bind(_:to:from:)`` binds them.
    static let stateColumns = """
        cursor, delivered, failed_attempts, dead_lettered, last_error, last_error_at, last_success_at, \
        pending_sequence, pending_redrive, pending_attempts, pending_first_attempt_at, pending_next_attempt_at, pending_last_error
        """

    /// The columns of `dead_letter` after `webhook`, in the order ``save(_:webhook:into:)`` binds them.
    static let deadLetterColumns = "sequence, event_id, attempts, first_attempt_at, failed_at, last_error, redrive"

    /// Whether webhook `id` has a row.
    private static func exists(_ id: String, in db: Database) throws -> Bool {
        let statement = try db.statement("SELECT 1 FROM webhook WHERE id = ?1")
        statement.bind(id, at: 1)
        let found = try statement.step()
        statement.reset()
        return found
    }

    /// Inserts the `webhook` row of `registration` and `state` at `position`, and its `webhook_filter` rows.
    static func insert(_ registration: WebhookRegistration, state: WebhookDeliveryState, position: Int64,
                       into db: Database) throws {
        let insert = try db.statement("""
            INSERT INTO webhook (id, position, \(webhookColumns))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
            """)
        insert.bind(registration.id, at: 1)
        insert.bind(position, at: 2)
        insert.bind(registration.url, at: 3)
        insert.bind(registration.secret, at: 4)
        insert.bind(registration.createdAt, at: 5)
        bind(state, to: insert, from: 6)
        try insert.execute()
        let filter = registration.filter
        let criterion = try db.statement("INSERT INTO webhook_filter (webhook, member, value) VALUES (?1, ?2, ?3)")
        for (member, values) in [("device", filter.devices), ("fence", filter.fences), ("group", filter.groups),
                                 ("type", Set(filter.types.map(\.rawValue)))] {
            for value in values.sorted() {
                criterion.reset()
                criterion.bind(registration.id, at: 1)
                criterion.bind(member, at: 2)
                criterion.bind(value, at: 3)
                try criterion.execute()
            }
        }
    }

    /// Inserts or replaces the `dead_letter` row of `webhook` at `letter.sequence`.
    static func save(_ letter: DeadLetter, webhook: String, into db: Database) throws {
        let insert = try db.statement("""
            INSERT OR REPLACE INTO dead_letter (webhook, \(deadLetterColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        insert.bind(webhook, at: 1)
        insert.bind(letter.sequence, at: 2)
        insert.bind(letter.eventID, at: 3)
        insert.bind(Int64(letter.attempts), at: 4)
        insert.bind(letter.firstAttemptAt, at: 5)
        insert.bind(letter.failedAt, at: 6)
        insert.bind(letter.lastError, at: 7)
        insert.bind(letter.redriveRequested, at: 8)
        try insert.execute()
    }

    /// Replaces the state of webhook `id` and runs `alsoWrite` in the same transaction.
    /// - Throws: ``WebhookError/Code/notFound`` (nothing changed) when the webhook does not exist.
    private func update(_ id: String, _ state: WebhookDeliveryState,
                        alsoWrite: (Database) throws -> Void) throws(WebhookError) {
        try withDatabase("saving webhook progress in", transaction: true) { db in
            let update = try db.statement("""
                UPDATE webhook SET (\(Self.stateColumns)) = (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
                WHERE id = ?1 RETURNING 1
                """)
            update.bind(id, at: 1)
            Self.bind(state, to: update, from: 2)
            guard try update.step() else { throw WebhookError(.notFound, "no webhook with id \(id)") }
            _ = try update.step()
            try alsoWrite(db)
        }
    }

    /// Up to `limit` dead letters of webhook `id` after `sequence`, in sequence order; `redriveOnly`
    /// keeps those marked for redrive.
    private func deadLetters(_ id: String, after sequence: Int64, limit: Int,
                             redriveOnly: Bool) throws(WebhookError) -> [DeadLetter] {
        try withDatabase("reading dead letters from") { db in
            let statement = try db.statement("""
                SELECT \(Self.deadLetterColumns) FROM dead_letter
                WHERE webhook = ?1 AND sequence > ?2 AND redrive >= ?4 ORDER BY sequence LIMIT ?3
                """)
            statement.bind(id, at: 1)
            statement.bind(sequence, at: 2)
            statement.bind(Int64(max(0, limit)), at: 3)
            statement.bind(redriveOnly, at: 4)
            var letters: [DeadLetter] = []
            while try statement.step() {
                letters.append(DeadLetter(sequence: statement.int64(0), eventID: statement.string(1),
                                          attempts: Int(statement.int64(2)), firstAttemptAt: statement.date(3),
                                          failedAt: statement.date(4), lastError: statement.string(5),
                                          redriveRequested: statement.bool(6)))
            }
            return letters
        }
    }

    /// Binds the 13 ``stateColumns`` of `state` from parameter `index` on (the `pending_…` ones all
    /// NULL when nothing is pending).
    private static func bind(_ state: WebhookDeliveryState, to statement: Statement, from index: Int32) {
        let counters = state.counters
        statement.bind(state.cursor, at: index)
        statement.bind(counters.delivered, at: index + 1)
        statement.bind(counters.failedAttempts, at: index + 2)
        statement.bind(counters.deadLettered, at: index + 3)
        statement.bind(counters.lastError, at: index + 4)
        statement.bind(counters.lastErrorAt, at: index + 5)
        statement.bind(counters.lastSuccessAt, at: index + 6)
        let pending = state.pending
        statement.bind(pending?.sequence, at: index + 7)
        statement.bind(pending?.isRedrive, at: index + 8)
        statement.bind(pending.map { Int64($0.attempts) }, at: index + 9)
        statement.bind(pending?.firstAttemptAt, at: index + 10)
        statement.bind(pending?.nextAttemptAt, at: index + 11)
        statement.bind(pending?.lastError, at: index + 12)
    }

    /// Reads the ``webhookColumns`` of the current row from `column` on.
    private static func webhook(id: String, _ statement: Statement, from column: Int32,
                                filter: WebhookFilter) -> StoredWebhook {
        let c = column + 3
        var counters = WebhookCounters()
        counters.delivered = statement.int64(c + 1)
        counters.failedAttempts = statement.int64(c + 2)
        counters.deadLettered = statement.int64(c + 3)
        counters.lastError = statement.optionalString(c + 4)
        counters.lastErrorAt = statement.optionalDate(c + 5)
        counters.lastSuccessAt = statement.optionalDate(c + 6)
        let pending = statement.isNull(c + 7) ? nil : PendingDelivery(
            sequence: statement.int64(c + 7), isRedrive: statement.bool(c + 8), attempts: Int(statement.int64(c + 9)),
            firstAttemptAt: statement.date(c + 10), nextAttemptAt: statement.date(c + 11), lastError: statement.string(c + 12))
        let registration = WebhookRegistration(id: id, url: statement.string(column), filter: filter,
                                               secret: statement.string(column + 1), createdAt: statement.date(column + 2))
        return StoredWebhook(registration: registration,
                             state: WebhookDeliveryState(cursor: statement.int64(c), pending: pending, counters: counters))
    }

    /// Adds one `webhook_filter` row (`member`, `value`) of webhook `id` to `filter`.
    /// - Throws: ``WebhookError/Code/storageFailure`` for a criterion or event type this build does not know.
    private static func add(member: String, value: String, to filter: inout WebhookFilter, of id: String) throws(WebhookError) {
        switch member {
        case "device": filter.devices.insert(value)
        case "fence": filter.fences.insert(value)
        case "group": filter.groups.insert(value)
        case "type":
            guard let kind = GeofenceEventKind(rawValue: value) else {
                throw WebhookError(.storageFailure, "webhook \(id) filters on the unknown event type \"\(value)\"; the webhook database was written by a newer Perimeter or is damaged")
            }
            filter.types.insert(kind)
        default:
            throw WebhookError(.storageFailure, "webhook \(id) has the unknown filter criterion \"\(member)\"; the webhook database was written by a newer Perimeter or is damaged")
        }
    }
}
