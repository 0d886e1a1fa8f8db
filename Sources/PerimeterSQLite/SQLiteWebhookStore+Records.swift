import PerimeterService

extension SQLiteWebhookStore {
    /// A webhook row: its id and two JSON documents.
    public struct WebhookRecord: Hashable, Sendable {
        /// The webhook id.
        public var id: String
        /// The registration, as JSON.
        public var registration: String
        /// The delivery state, as JSON.
        public var state: String

        /// Creates a record.
        public init(id: String, registration: String, state: String) {
            self.id = id
            self.registration = registration
            self.state = state
        }
    }

    /// A dead-letter row.
    public struct DeadLetterRecord: Hashable, Sendable {
        /// The event's log sequence.
        public var sequence: Int64
        /// Whether a redrive is requested.
        public var redrive: Bool
        /// The dead letter, as JSON.
        public var letter: String

        /// Creates a record.
        public init(sequence: Int64, redrive: Bool, letter: String) {
            self.sequence = sequence
            self.redrive = redrive
            self.letter = letter
        }
    }

    /// Every webhook row, in insertion order. - Complexity: O(n).
    public func webhookRecords() throws(GeofencingError) -> [WebhookRecord] {
        try withDatabase("reading webhooks from") { db in
            let statement = try db.statement("SELECT id, registration, state FROM webhook ORDER BY position")
            var rows: [WebhookRecord] = []
            while try statement.step() {
                rows.append(WebhookRecord(id: statement.string(0), registration: statement.string(1), state: statement.string(2)))
            }
            return rows
        }
    }

    /// The row of webhook `id`, or `nil`.
    public func webhookRecord(id: String) throws(GeofencingError) -> WebhookRecord? {
        try withDatabase("reading a webhook from") { db in
            let statement = try db.statement("SELECT registration, state FROM webhook WHERE id = ?1")
            statement.bind(id, at: 1)
            guard try statement.step() else { return nil }
            let row = WebhookRecord(id: id, registration: statement.string(0), state: statement.string(1))
            statement.reset()
            return row
        }
    }

    /// Inserts a row; `false` (and nothing changed) when the id exists.
    public func insertWebhookRecord(_ record: WebhookRecord) throws(GeofencingError) -> Bool {
        try withDatabase("adding a webhook to", transaction: true) { db in
            let exists = try db.statement("SELECT 1 FROM webhook WHERE id = ?1")
            exists.bind(record.id, at: 1)
            if try exists.step() {
                exists.reset()
                return false
            }
            let position = try db.integer("SELECT coalesce(max(position), 0) + 1 FROM webhook") ?? 1
            let insert = try db.statement("INSERT INTO webhook (id, position, registration, state) VALUES (?1, ?2, ?3, ?4)")
            insert.bind(record.id, at: 1)
            insert.bind(position, at: 2)
            insert.bind(record.registration, at: 3)
            insert.bind(record.state, at: 4)
            try insert.execute()
            return true
        }
    }

    /// Deletes a webhook row and its dead letters; `false` when there was none.
    public func deleteWebhookRecord(id: String) throws(GeofencingError) -> Bool {
        try withDatabase("deleting a webhook from", transaction: true) { db in
            let letters = try db.statement("DELETE FROM dead_letter WHERE webhook = ?1")
            letters.bind(id, at: 1)
            try letters.execute()
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
    public func updateWebhookState(id: String, state: String, deadLetter: DeadLetterRecord? = nil,
                                   removingDeadLetter: Int64? = nil) throws(GeofencingError) -> Bool {
        try withDatabase("saving webhook progress in", transaction: true) { db in
            let update = try db.statement("UPDATE webhook SET state = ?2 WHERE id = ?1 RETURNING 1")
            update.bind(id, at: 1)
            update.bind(state, at: 2)
            guard try update.step() else { return false }
            _ = try update.step()
            if let deadLetter {
                let upsert = try db.statement("INSERT OR REPLACE INTO dead_letter (webhook, sequence, redrive, letter) VALUES (?1, ?2, ?3, ?4)")
                upsert.bind(id, at: 1)
                upsert.bind(deadLetter.sequence, at: 2)
                upsert.bind(Int64(deadLetter.redrive ? 1 : 0), at: 3)
                upsert.bind(deadLetter.letter, at: 4)
                try upsert.execute()
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
            let statement = try db.statement(
                "SELECT sequence, redrive, letter FROM dead_letter WHERE webhook = ?1 AND sequence > ?2 AND redrive >= ?4 ORDER BY sequence LIMIT ?3")
            statement.bind(webhook, at: 1)
            statement.bind(sequence, at: 2)
            statement.bind(Int64(max(0, limit)), at: 3)
            statement.bind(Int64(redriveOnly ? 1 : 0), at: 4)
            var rows: [DeadLetterRecord] = []
            while try statement.step() {
                rows.append(DeadLetterRecord(sequence: statement.int64(0), redrive: statement.int64(1) != 0, letter: statement.string(2)))
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
}
