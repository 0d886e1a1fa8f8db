import PerimeterService

extension SQLiteWebhookStore {
    /// A webhook's rows: its registration and its delivery state, one value per column of `webhook`,
    /// and its filter (the rows of `webhook_filter`). Times are seconds since 1970.
    public struct WebhookRecord: Hashable, Sendable {
        /// The webhook id.
        public var id: String
        /// The target URL.
        public var url: String
        /// The signing secret.
        public var secret: String
        /// When it was registered, in seconds since 1970.
        public var createdAt: Double
        /// Which events it receives.
        public var filter: FilterRecord
        /// Its delivery progress.
        public var state: StateRecord

        /// Creates a record.
        public init(id: String, url: String, secret: String, createdAt: Double, filter: FilterRecord = FilterRecord(),
                    state: StateRecord) {
            self.id = id
            self.url = url
            self.secret = secret
            self.createdAt = createdAt
            self.filter = filter
            self.state = state
        }
    }

    /// A webhook's filter criteria, each list sorted and without repeats (an empty list matches all).
    public struct FilterRecord: Hashable, Sendable {
        /// Device ids.
        public var devices: [String]
        /// Fence ids.
        public var fences: [String]
        /// Fence groups.
        public var groups: [String]
        /// Event kinds, by name (`entry`, `exit`, …).
        public var types: [String]

        /// Creates a filter record; the lists are sorted and repeats dropped.
        public init(devices: [String] = [], fences: [String] = [], groups: [String] = [], types: [String] = []) {
            self.devices = Array(Set(devices)).sorted()
            self.fences = Array(Set(fences)).sorted()
            self.groups = Array(Set(groups)).sorted()
            self.types = Array(Set(types)).sorted()
        }

        /// The `webhook_filter.member` name and the values of each criterion.
        var members: [(member: String, values: [String])] {
            [("device", devices), ("fence", fences), ("group", groups), ("type", types)]
        }
    }

    /// A webhook's delivery progress: cursor, counters and the attempt in flight.
    public struct StateRecord: Hashable, Sendable {
        /// The sequence of the last log event done with.
        public var cursor: Int64
        /// Events delivered.
        public var delivered: Int64
        /// Failed attempts.
        public var failedAttempts: Int64
        /// Events dead-lettered.
        public var deadLettered: Int64
        /// The last failure's description.
        public var lastError: String?
        /// When the last failure happened, in seconds since 1970.
        public var lastErrorAt: Double?
        /// When the last delivery succeeded, in seconds since 1970.
        public var lastSuccessAt: Double?
        /// The event being retried, if any.
        public var pending: PendingRecord?

        /// Creates a state record.
        public init(cursor: Int64, delivered: Int64 = 0, failedAttempts: Int64 = 0, deadLettered: Int64 = 0,
                    lastError: String? = nil, lastErrorAt: Double? = nil, lastSuccessAt: Double? = nil,
                    pending: PendingRecord? = nil) {
            self.cursor = cursor
            self.delivered = delivered
            self.failedAttempts = failedAttempts
            self.deadLettered = deadLettered
            self.lastError = lastError
            self.lastErrorAt = lastErrorAt
            self.lastSuccessAt = lastSuccessAt
            self.pending = pending
        }
    }

    /// The attempt in flight: the `pending_…` columns of `webhook`, all set or all NULL.
    public struct PendingRecord: Hashable, Sendable {
        /// The event's log sequence.
        public var sequence: Int64
        /// Whether it is a redriven dead letter.
        public var redrive: Bool
        /// Attempts made so far.
        public var attempts: Int64
        /// When the first attempt was made, in seconds since 1970.
        public var firstAttemptAt: Double
        /// When the next attempt is due, in seconds since 1970.
        public var nextAttemptAt: Double
        /// Why the last attempt failed.
        public var lastError: String

        /// Creates a pending record.
        public init(sequence: Int64, redrive: Bool, attempts: Int64, firstAttemptAt: Double, nextAttemptAt: Double,
                    lastError: String) {
            self.sequence = sequence
            self.redrive = redrive
            self.attempts = attempts
            self.firstAttemptAt = firstAttemptAt
            self.nextAttemptAt = nextAttemptAt
            self.lastError = lastError
        }
    }

    /// A `dead_letter` row.
    public struct DeadLetterRecord: Hashable, Sendable {
        /// The event's log sequence.
        public var sequence: Int64
        /// The event id (empty when the event was no longer in the log).
        public var eventID: String
        /// Attempts made.
        public var attempts: Int64
        /// When the first attempt was made, in seconds since 1970.
        public var firstAttemptAt: Double
        /// When it was dead-lettered, in seconds since 1970.
        public var failedAt: Double
        /// Why the last attempt failed.
        public var lastError: String
        /// Whether a redrive is requested.
        public var redrive: Bool

        /// Creates a record.
        public init(sequence: Int64, eventID: String, attempts: Int64, firstAttemptAt: Double, failedAt: Double,
                    lastError: String, redrive: Bool) {
            self.sequence = sequence
            self.eventID = eventID
            self.attempts = attempts
            self.firstAttemptAt = firstAttemptAt
            self.failedAt = failedAt
            self.lastError = lastError
            self.redrive = redrive
        }
    }

    /// Every webhook, in insertion order. - Complexity: O(n + f) for n webhooks and f filter rows.
    public func webhookRecords() throws(GeofencingError) -> [WebhookRecord] {
        try withDatabase("reading webhooks from") { db in
            var filters: [String: [(String, String)]] = [:]
            let criteria = try db.statement("SELECT webhook, member, value FROM webhook_filter")
            while try criteria.step() {
                filters[criteria.string(0), default: []].append((criteria.string(1), criteria.string(2)))
            }
            let statement = try db.statement("SELECT id, \(Self.webhookColumns) FROM webhook ORDER BY position")
            var rows: [WebhookRecord] = []
            while try statement.step() {
                let id = statement.string(0)
                rows.append(Self.webhookRecord(id: id, statement, from: 1, filter: Self.filter(filters[id] ?? [])))
            }
            return rows
        }
    }

    /// The row of webhook `id`, or `nil`.
    public func webhookRecord(id: String) throws(GeofencingError) -> WebhookRecord? {
        try withDatabase("reading a webhook from") { db in
            let criteria = try db.statement("SELECT member, value FROM webhook_filter WHERE webhook = ?1")
            criteria.bind(id, at: 1)
            var filter: [(String, String)] = []
            while try criteria.step() { filter.append((criteria.string(0), criteria.string(1))) }
            let statement = try db.statement("SELECT \(Self.webhookColumns) FROM webhook WHERE id = ?1")
            statement.bind(id, at: 1)
            guard try statement.step() else { return nil }
            let row = Self.webhookRecord(id: id, statement, from: 0, filter: Self.filter(filter))
            statement.reset()
            return row
        }
    }

    /// Inserts a webhook with its filter, after every other; `false` (and nothing changed) when the id
    /// exists.
    public func insertWebhookRecord(_ record: WebhookRecord) throws(GeofencingError) -> Bool {
        try withDatabase("adding a webhook to", transaction: true) { db in
            let exists = try db.statement("SELECT 1 FROM webhook WHERE id = ?1")
            exists.bind(record.id, at: 1)
            if try exists.step() {
                exists.reset()
                return false
            }
            let position = try db.integer("SELECT coalesce(max(position), 0) + 1 FROM webhook") ?? 1
            try Self.insert(record, position: position, into: db)
            return true
        }
    }

    /// Deletes a webhook with its filter and dead letters; `false` when there was none.
    public func deleteWebhookRecord(id: String) throws(GeofencingError) -> Bool {
        try withDatabase("deleting a webhook from", transaction: true) { db in
            // Its webhook_filter and dead_letter rows go with it (ON DELETE CASCADE).
            let delete = try db.statement("DELETE FROM webhook WHERE id = ?1 RETURNING 1")
            delete.bind(id, at: 1)
            let existed = try delete.step()
            if existed { _ = try delete.step() }
            return existed
        }
    }

    /// Replaces the state of webhook `id` and, in the same transaction, upserts `deadLetter` and/or
    /// deletes the dead letter at `removingDeadLetter`. Returns `false` (nothing changed) when the
    /// webhook does not exist.
    public func updateWebhookState(id: String, state: StateRecord, deadLetter: DeadLetterRecord? = nil,
                                   removingDeadLetter: Int64? = nil) throws(GeofencingError) -> Bool {
        try withDatabase("saving webhook progress in", transaction: true) { db in
            let update = try db.statement("""
                UPDATE webhook SET (\(Self.stateColumns)) = (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
                WHERE id = ?1 RETURNING 1
                """)
            update.bind(id, at: 1)
            Self.bind(state, to: update, from: 2)
            guard try update.step() else { return false }
            _ = try update.step()
            if let deadLetter {
                try Self.save(deadLetter, webhook: id, into: db)
            }
            if let removingDeadLetter {
                let delete = try db.statement("DELETE FROM dead_letter WHERE webhook = ?1 AND sequence = ?2")
                delete.bind(id, at: 1)
                delete.bind(removingDeadLetter, at: 2)
                try delete.execute()
            }
            return true
        }
    }

    /// Up to `limit` dead letters of `webhook` after `sequence`, in sequence order; `redriveOnly`
    /// keeps those marked for redrive.
    public func deadLetterRecords(webhook: String, after sequence: Int64, limit: Int,
                                  redriveOnly: Bool = false) throws(GeofencingError) -> [DeadLetterRecord] {
        try withDatabase("reading dead letters from") { db in
            let statement = try db.statement("""
                SELECT \(Self.deadLetterColumns) FROM dead_letter
                WHERE webhook = ?1 AND sequence > ?2 AND redrive >= ?4 ORDER BY sequence LIMIT ?3
                """)
            statement.bind(webhook, at: 1)
            statement.bind(sequence, at: 2)
            statement.bind(Int64(max(0, limit)), at: 3)
            statement.bind(Int64(redriveOnly ? 1 : 0), at: 4)
            var rows: [DeadLetterRecord] = []
            while try statement.step() {
                rows.append(DeadLetterRecord(sequence: statement.int64(0), eventID: statement.string(1), attempts: statement.int64(2),
                                             firstAttemptAt: statement.double(3), failedAt: statement.double(4),
                                             lastError: statement.string(5), redrive: statement.int64(6) != 0))
            }
            return rows
        }
    }

    /// How many dead letters `webhook` has.
    public func deadLetterRecordCount(webhook: String) throws(GeofencingError) -> Int {
        try withDatabase("counting dead letters in") { db in
            let statement = try db.statement("SELECT count(*) FROM dead_letter WHERE webhook = ?1")
            statement.bind(webhook, at: 1)
            guard try statement.step() else { return 0 }
            let count = Int(statement.int64(0))
            statement.reset()
            return count
        }
    }

    /// Marks dead letters of `webhook` for redrive (all when `sequences` is `nil`); returns how many
    /// matched.
    public func markDeadLetterRecordsForRedrive(webhook: String, sequences: [Int64]?) throws(GeofencingError) -> Int {
        try withDatabase("marking dead letters for redrive in", transaction: true) { db in
            guard let sequences else {
                let all = try db.statement("UPDATE dead_letter SET redrive = 1 WHERE webhook = ?1 RETURNING 1")
                all.bind(webhook, at: 1)
                var count = 0
                while try all.step() { count += 1 }
                return count
            }
            let one = try db.statement("UPDATE dead_letter SET redrive = 1 WHERE webhook = ?1 AND sequence = ?2 RETURNING 1")
            var count = 0
            for sequence in Set(sequences) {
                one.reset()
                one.bind(webhook, at: 1)
                one.bind(sequence, at: 2)
                while try one.step() { count += 1 }
            }
            return count
        }
    }

    // MARK: Rows ↔ records (shared with the migration from version 1)

    /// The columns of `webhook` after `id` that ``webhookRecord(id:_:from:filter:)`` reads.
    static let webhookColumns = "url, secret, created_at, \(stateColumns)"

    /// The state columns of `webhook`, in the order ``bind(_:to:from:)`` binds them.
    static let stateColumns = """
        cursor, delivered, failed_attempts, dead_lettered, last_error, last_error_at, last_success_at, \
        pending_sequence, pending_redrive, pending_attempts, pending_first_attempt_at, pending_next_attempt_at, pending_last_error
        """

    /// The columns of `dead_letter` after `webhook`.
    static let deadLetterColumns = "sequence, event_id, attempts, first_attempt_at, failed_at, last_error, redrive"

    /// Inserts `record`'s `webhook` row at `position` and its `webhook_filter` rows.
    static func insert(_ record: WebhookRecord, position: Int64, into db: Database) throws {
        let insert = try db.statement("""
            INSERT INTO webhook (id, position, \(webhookColumns))
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)
            """)
        insert.bind(record.id, at: 1)
        insert.bind(position, at: 2)
        insert.bind(record.url, at: 3)
        insert.bind(record.secret, at: 4)
        insert.bind(record.createdAt, at: 5)
        bind(record.state, to: insert, from: 6)
        try insert.execute()
        let criterion = try db.statement("INSERT INTO webhook_filter (webhook, member, value) VALUES (?1, ?2, ?3)")
        for (member, values) in record.filter.members {
            for value in values {
                criterion.reset()
                criterion.bind(record.id, at: 1)
                criterion.bind(member, at: 2)
                criterion.bind(value, at: 3)
                try criterion.execute()
            }
        }
    }

    /// Inserts or replaces the `dead_letter` row of `webhook` at `letter.sequence`.
    static func save(_ letter: DeadLetterRecord, webhook: String, into db: Database) throws {
        let insert = try db.statement("""
            INSERT OR REPLACE INTO dead_letter (webhook, \(deadLetterColumns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        insert.bind(webhook, at: 1)
        insert.bind(letter.sequence, at: 2)
        insert.bind(letter.eventID, at: 3)
        insert.bind(letter.attempts, at: 4)
        insert.bind(letter.firstAttemptAt, at: 5)
        insert.bind(letter.failedAt, at: 6)
        insert.bind(letter.lastError, at: 7)
        insert.bind(Int64(letter.redrive ? 1 : 0), at: 8)
        try insert.execute()
    }

    /// Binds the 13 ``stateColumns`` of `state` from parameter `index` on.
    private static func bind(_ state: StateRecord, to statement: Statement, from index: Int32) {
        statement.bind(state.cursor, at: index)
        statement.bind(state.delivered, at: index + 1)
        statement.bind(state.failedAttempts, at: index + 2)
        statement.bind(state.deadLettered, at: index + 3)
        statement.bind(state.lastError, at: index + 4)
        statement.bind(state.lastErrorAt, at: index + 5)
        statement.bind(state.lastSuccessAt, at: index + 6)
        let pending = state.pending
        statement.bind(pending?.sequence, at: index + 7)
        statement.bind(pending.map { Int64($0.redrive ? 1 : 0) }, at: index + 8)
        statement.bind(pending?.attempts, at: index + 9)
        statement.bind(pending?.firstAttemptAt, at: index + 10)
        statement.bind(pending?.nextAttemptAt, at: index + 11)
        statement.bind(pending?.lastError, at: index + 12)
    }

    /// Reads the ``webhookColumns`` of the current row from `column` on.
    private static func webhookRecord(id: String, _ statement: Statement, from column: Int32,
                                      filter: FilterRecord) -> WebhookRecord {
        let c = column + 3
        let pending: PendingRecord? = statement.isNull(c + 7) ? nil : PendingRecord(
            sequence: statement.int64(c + 7), redrive: statement.int64(c + 8) != 0, attempts: statement.int64(c + 9),
            firstAttemptAt: statement.double(c + 10), nextAttemptAt: statement.double(c + 11), lastError: statement.string(c + 12))
        let state = StateRecord(cursor: statement.int64(c), delivered: statement.int64(c + 1), failedAttempts: statement.int64(c + 2),
                                deadLettered: statement.int64(c + 3), lastError: statement.optionalString(c + 4),
                                lastErrorAt: statement.optionalDouble(c + 5), lastSuccessAt: statement.optionalDouble(c + 6),
                                pending: pending)
        return WebhookRecord(id: id, url: statement.string(column), secret: statement.string(column + 1),
                             createdAt: statement.double(column + 2), filter: filter, state: state)
    }

    /// A filter record from `(member, value)` rows of `webhook_filter`.
    private static func filter(_ rows: [(String, String)]) -> FilterRecord {
        var lists: [String: [String]] = [:]
        for (member, value) in rows { lists[member, default: []].append(value) }
        return FilterRecord(devices: lists["device"] ?? [], fences: lists["fence"] ?? [], groups: lists["group"] ?? [],
                            types: lists["type"] ?? [])
    }
}
