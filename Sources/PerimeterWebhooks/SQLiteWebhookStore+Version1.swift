import Foundation
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import PerimeterSQLite

extension SQLiteWebhookStore {
    /// Migration 2: reads every version-1 row (JSON documents, as PerimeterWebhooks wrote them), checks
    /// it, writes it as typed rows of the version-2 tables and drops the version-1 tables. It runs in
    /// the migrating transaction: a row it cannot convert throws, and the whole opening rolls back.
    ///
    /// - Throws: ``GeofencingError/Code/incompatibleStorage`` naming the file, the webhook and what is
    ///   wrong with its row; `DatabaseError` for anything else SQLite refuses.
    static func migrateToVersion2(_ db: Database) throws {
        try db.execute("ALTER TABLE webhook RENAME TO webhook_v1; ALTER TABLE dead_letter RENAME TO dead_letter_v1;")
        try db.execute(version2Tables)

        var webhooks: [(id: String, position: Int64, registration: String, state: String)] = []
        let rows = try db.statement("SELECT id, position, registration, state FROM webhook_v1 ORDER BY position, id")
        while try rows.step() {
            webhooks.append((rows.string(0), rows.int64(1), rows.string(2), rows.string(3)))
        }
        // Positions are renumbered 1…n in their order: version 1 did not keep them unique.
        for (index, row) in webhooks.enumerated() {
            try converting(webhook: row.id, in: db) {
                let webhook = try Version1.webhook(id: row.id, registration: row.registration, state: row.state)
                try Version1.insert {
                    try insert(webhook.registration, state: webhook.state, position: Int64(index + 1), into: db)
                }
            }
        }

        var letters: [(webhook: String, sequence: Int64, redrive: Int64, letter: String)] = []
        let letterRows = try db.statement("SELECT webhook, sequence, redrive, letter FROM dead_letter_v1 ORDER BY webhook, sequence")
        while try letterRows.step() {
            letters.append((letterRows.string(0), letterRows.int64(1), letterRows.int64(2), letterRows.string(3)))
        }
        let known = Set(webhooks.map(\.id))
        for row in letters {
            try converting(webhook: row.webhook, in: db) {
                guard known.contains(row.webhook) else {
                    throw Version1.Invalid("its dead letter \(row.sequence) has no webhook row")
                }
                let letter = try Version1.deadLetter(sequence: row.sequence, redrive: row.redrive, letter: row.letter)
                try Version1.insert { try save(letter, webhook: row.webhook, into: db) }
            }
        }
        try db.execute("DROP TABLE dead_letter_v1; DROP TABLE webhook_v1;")
    }

    /// Runs `body` for one version-1 webhook, turning a ``Version1/Invalid`` it throws into the error
    /// that names the file and the webhook and says what to do; other errors pass unchanged.
    private static func converting(webhook id: String, in db: Database, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as Version1.Invalid {
            throw GeofencingError(.incompatibleStorage, """
                \(db.path): webhook "\(id)" cannot be migrated from webhook schema version 1 to 2: \(error.problem). \
                Nothing was changed (the file is still at version 1); repair or delete that webhook's rows \
                (tables webhook and dead_letter) with sqlite3, or open the file with the Perimeter that wrote it
                """)
        }
    }

    /// The documents of schema version 1, read as version 1 wrote them: required members must be
    /// there with their type, optional ones (counters, errors, times) may be missing or `null`, and a
    /// present member of the wrong type is refused rather than dropped.
    enum Version1 {
        /// Why a version-1 row cannot be converted.
        struct Invalid: Error {
            /// What is wrong, for the migration's error message.
            let problem: String
            init(_ problem: String) { self.problem = problem }
        }

        /// A webhook row's registration and state documents as the model.
        static func webhook(id: String, registration: String, state: String) throws(Invalid) -> StoredWebhook {
            let r = try Document(parsing: registration, what: "registration")
            let named = try r.string("id")
            guard named == id else { throw Invalid("its registration names the id \"\(named)\"") }
            let s = try Document(parsing: state, what: "delivery state")
            var pending: PendingDelivery?
            if let p = try s.optionalObject("pending") {
                pending = PendingDelivery(sequence: try p.integer("sequence"), isRedrive: try p.optionalBool("redrive") ?? false,
                                          attempts: Int(try p.integer("attempts")), firstAttemptAt: try p.date("firstAttemptAt"),
                                          nextAttemptAt: try p.date("nextAttemptAt"), lastError: try p.optionalString("lastError") ?? "")
            }
            var state = WebhookDeliveryState(cursor: try s.integer("cursor"), pending: pending)
            state.counters.delivered = try s.optionalInteger("delivered") ?? 0
            state.counters.failedAttempts = try s.optionalInteger("failedAttempts") ?? 0
            state.counters.deadLettered = try s.optionalInteger("deadLettered") ?? 0
            state.counters.lastError = try s.optionalString("lastError")
            state.counters.lastErrorAt = try s.optionalDate("lastErrorAt")
            state.counters.lastSuccessAt = try s.optionalDate("lastSuccessAt")
            let (url, secret, createdAt) = (try r.string("url"), try r.string("secret"), try r.date("createdAtSeconds"))
            let registration = WebhookRegistration(id: id, url: url, filter: try filter(r.optionalObject("filter")),
                                                   secret: secret, createdAt: createdAt)
            return StoredWebhook(registration: registration, state: state)
        }

        /// A dead-letter row's document as the model.
        static func deadLetter(sequence: Int64, redrive: Int64, letter: String) throws(Invalid) -> DeadLetter {
            let d = try Document(parsing: letter, what: "dead letter \(sequence)")
            let named = try d.integer("sequence")
            guard named == sequence else { throw Invalid("its dead letter \(sequence) names the sequence \(named)") }
            guard redrive == 0 || redrive == 1 else {
                throw Invalid("its dead letter \(sequence) has the redrive flag \(redrive) (0 or 1 expected)")
            }
            return DeadLetter(sequence: sequence, eventID: try d.string("eventId"), attempts: Int(try d.integer("attempts")),
                              firstAttemptAt: try d.date("firstAttemptAt"), failedAt: try d.date("failedAt"),
                              lastError: try d.optionalString("lastError") ?? "", redriveRequested: redrive == 1)
        }

        /// Runs an insert of converted rows; a value the version-2 tables refuse (a CHECK constraint: a
        /// negative cursor, an empty secret, …) is a row that cannot be converted. Other errors pass.
        static func insert(_ body: () throws -> Void) throws {
            do {
                try body()
            } catch let error as DatabaseError where error.resultCode.primary == .constraint {
                throw Invalid("a value breaks a rule of version 2 (\(error.message))")
            }
        }

        /// The filter as version 1 wrote it: `{"devices":[…],"fences":[…],"groups":[…],"types":[…]}`,
        /// empty lists left out; a missing filter matches every event.
        private static func filter(_ document: Document?) throws(Invalid) -> WebhookFilter {
            guard let document else { return WebhookFilter() }
            let lists = ["devices", "fences", "groups", "types"]
            if let unknown = document.members.keys.sorted().first(where: { !lists.contains($0) }) {
                throw Invalid("its registration's filter has the unknown member \"\(unknown)\"")
            }
            var types: Set<GeofenceEventKind> = []
            for name in try document.strings("types") {
                guard let kind = GeofenceEventKind(rawValue: name) else {
                    throw Invalid("its registration's filter has the unknown event type \"\(name)\"")
                }
                types.insert(kind)
            }
            return WebhookFilter(devices: Set(try document.strings("devices")), fences: Set(try document.strings("fences")),
                                 groups: Set(try document.strings("groups")), types: types)
        }
    }
}

private typealias Invalid = SQLiteWebhookStore.Version1.Invalid

/// A JSON object of a version-1 document, with typed member access whose errors say which member of
/// which document is wrong.
private struct Document {
    let members: [String: JSONValue]
    /// What the object is ("registration", "delivery state", "dead letter 7", "pending delivery …").
    let what: String

    init(parsing text: String, what: String) throws(Invalid) {
        let value: JSONValue
        do {
            value = try JSONParser().parse(text)
        } catch {
            throw Invalid("its \(what) is not valid JSON (\(error))")
        }
        guard let members = value.objectValue else { throw Invalid("its \(what) is not a JSON object") }
        self.init(members: members, what: what)
    }

    init(members: [String: JSONValue], what: String) {
        self.members = members
        self.what = what
    }

    /// The member `key`, `nil` when it is missing or `null`.
    private func present(_ key: String) -> JSONValue? {
        guard let value = members[key], !value.isNull else { return nil }
        return value
    }

    private func required<T>(_ key: String, _ value: T?) throws(Invalid) -> T {
        guard let value else { throw Invalid("its \(what) has no \(key)") }
        return value
    }

    private func typed<T>(_ key: String, _ type: String, _ convert: (JSONValue) -> T?) throws(Invalid) -> T? {
        guard let value = present(key) else { return nil }
        guard let converted = convert(value) else {
            throw Invalid("its \(what) has \(key) \(JSONWriter().string(value)), not \(type)")
        }
        return converted
    }

    func optionalString(_ key: String) throws(Invalid) -> String? {
        try typed(key, "a string") { $0.stringValue }
    }

    func string(_ key: String) throws(Invalid) -> String {
        try required(key, try optionalString(key))
    }

    func optionalInteger(_ key: String) throws(Invalid) -> Int64? {
        try typed(key, "an integer") { $0.int64Value }
    }

    func integer(_ key: String) throws(Invalid) -> Int64 {
        try required(key, try optionalInteger(key))
    }

    func optionalNumber(_ key: String) throws(Invalid) -> Double? {
        try typed(key, "a number") { $0.doubleValue }
    }

    func number(_ key: String) throws(Invalid) -> Double {
        try required(key, try optionalNumber(key))
    }

    /// The member `key`, a number of seconds since 1970, as a time; `nil` when missing.
    func optionalDate(_ key: String) throws(Invalid) -> Date? {
        try optionalNumber(key).map(Date.init(timeIntervalSince1970:))
    }

    /// The member `key`, a number of seconds since 1970, as a time.
    func date(_ key: String) throws(Invalid) -> Date {
        Date(timeIntervalSince1970: try number(key))
    }

    func optionalBool(_ key: String) throws(Invalid) -> Bool? {
        try typed(key, "true or false") { $0.boolValue }
    }

    func optionalObject(_ key: String) throws(Invalid) -> Document? {
        try typed(key, "an object") { value in
            value.objectValue.map { Document(members: $0, what: "\(what)'s \(key)") }
        }
    }

    /// The member `key` as a list of non-empty strings; empty when missing.
    func strings(_ key: String) throws(Invalid) -> [String] {
        let list = try typed(key, "an array of strings") { value in
            value.arrayValue.flatMap { elements in
                let texts = elements.compactMap(\.stringValue)
                return texts.count == elements.count && !texts.contains("") ? texts : nil
            }
        }
        return list ?? []
    }
}
