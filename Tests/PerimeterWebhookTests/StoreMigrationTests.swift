import Foundation
import PerimeterService
import Testing
import PerimeterTestSupport
import PerimeterSQLite
@testable import PerimeterWebhooks

/// Raw SQL on a webhook file, beside the store: to write a file as an older version did and to look at
/// what the store wrote.
private struct RawFile {
    let db: Database

    init(_ path: String) throws { db = try Database(path: path) }

    func close() { db.close() }

    func integer(_ sql: String) throws -> Int64? { try db.integer(sql) }

    /// Every row of `sql`, each column as text (NULL as `nil`).
    func rows(_ sql: String, columns: Int32) throws -> [[String?]] {
        let statement = try db.statement(sql)
        var rows: [[String?]] = []
        while try statement.step() { rows.append((0..<columns).map { statement.optionalString($0) }) }
        return rows
    }

    /// The schema, the version stamps and every row of the version-1 tables: what "unchanged" means.
    func version1Snapshot() throws -> [[String?]] {
        try rows("SELECT type, name, sql FROM sqlite_master ORDER BY name", columns: 3)
            + rows("SELECT * FROM webhook ORDER BY id", columns: 4)
            + rows("SELECT * FROM dead_letter ORDER BY webhook, sequence", columns: 4)
            + [[try integer("PRAGMA user_version").map(String.init), try integer("PRAGMA application_id").map(String.init)]]
    }
}

/// A webhook file of schema version 1, written as version 1 wrote it: its SQL and its JSON documents.
private enum Version1File {
    static let schema = """
        PRAGMA journal_mode = WAL;
        CREATE TABLE webhook (
            id TEXT PRIMARY KEY, position INTEGER NOT NULL, registration TEXT NOT NULL, state TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE dead_letter (
            webhook TEXT NOT NULL, sequence INTEGER NOT NULL, redrive INTEGER NOT NULL, letter TEXT NOT NULL,
            PRIMARY KEY (webhook, sequence)) WITHOUT ROWID;
        PRAGMA application_id = 1347573576;
        PRAGMA user_version = 1;
        """

    /// Three webhooks (registration order alpha, gamma, beta; positions with a gap) and three dead letters.
    static let rows = #"""
        INSERT INTO webhook VALUES ('wh_alpha', 1,
            '{"createdAt":"2023-11-14T22:13:20.250Z","createdAtSeconds":1700000000.25,"filter":{"devices":["d1","d2"],"fences":["a","b"],"groups":["g"],"types":["entry","exit"]},"id":"wh_alpha","secret":"alpha-secret-0123456789","url":"https://example.com/alpha"}',
            '{"cursor":42,"deadLettered":2,"delivered":40,"failedAttempts":9,"lastError":"HTTP 503","lastErrorAt":1700000100.5,"lastSuccessAt":1700000050.125,"pending":{"attempts":3,"firstAttemptAt":1700000090,"lastError":"timeout","nextAttemptAt":1700000102.75,"redrive":true,"sequence":9}}');
        INSERT INTO webhook VALUES ('beta', 5,
            '{"createdAt":"2023-11-14T22:15:00Z","createdAtSeconds":1700000100,"filter":{},"id":"beta","secret":"beta-secret-0123456789ab","url":"http://10.0.0.1:8080/hook"}',
            '{"cursor":0,"deadLettered":0,"delivered":0,"failedAttempts":0}');
        INSERT INTO webhook VALUES ('gamma', 2,
            '{"createdAt":"2023-11-14T22:14:00Z","createdAtSeconds":1700000040,"filter":{"types":["dwell"]},"id":"gamma","secret":"gamma-secret-0123456789ab","url":"http://example.org/g"}',
            '{"cursor":17,"deadLettered":1,"delivered":16,"failedAttempts":1,"lastError":"event 3 is not in the event log","lastErrorAt":1700000060}');
        INSERT INTO dead_letter VALUES ('wh_alpha', 7, 0,
            '{"attempts":5,"eventId":"ev-7","failedAt":1700000080.5,"firstAttemptAt":1700000010,"lastError":"HTTP 500","sequence":7}');
        INSERT INTO dead_letter VALUES ('wh_alpha', 9, 1,
            '{"attempts":12,"eventId":"ev-9","failedAt":1700000085,"firstAttemptAt":1700000011.5,"lastError":"connection refused","sequence":9}');
        INSERT INTO dead_letter VALUES ('gamma', 3, 0,
            '{"attempts":0,"eventId":"","failedAt":1700000060,"firstAttemptAt":1700000060,"lastError":"event 3 is not in the event log","sequence":3}');
        """#

    static func write(_ path: String, extra: String = "") throws {
        let file = try RawFile(path)
        try file.db.execute(schema)
        try file.db.execute(rows)
        if !extra.isEmpty { try file.db.execute(extra) }
        file.close()
    }

    /// What the rows above hold, as the model.
    static var webhooks: [StoredWebhook] {
        var alpha = WebhookDeliveryState(cursor: 42)
        alpha.counters.delivered = 40
        alpha.counters.failedAttempts = 9
        alpha.counters.deadLettered = 2
        alpha.counters.lastError = "HTTP 503"
        alpha.counters.lastErrorAt = Date(timeIntervalSince1970: 1_700_000_100.5)
        alpha.counters.lastSuccessAt = Date(timeIntervalSince1970: 1_700_000_050.125)
        alpha.pending = PendingDelivery(sequence: 9, isRedrive: true, attempts: 3, firstAttemptAt: Date(timeIntervalSince1970: 1_700_000_090),
                                        nextAttemptAt: Date(timeIntervalSince1970: 1_700_000_102.75), lastError: "timeout")
        var gamma = WebhookDeliveryState(cursor: 17)
        gamma.counters.delivered = 16
        gamma.counters.failedAttempts = 1
        gamma.counters.deadLettered = 1
        gamma.counters.lastError = "event 3 is not in the event log"
        gamma.counters.lastErrorAt = Date(timeIntervalSince1970: 1_700_000_060)
        return [
            StoredWebhook(registration: WebhookRegistration(
                id: "wh_alpha", url: "https://example.com/alpha",
                filter: WebhookFilter(devices: ["d1", "d2"], fences: ["a", "b"], groups: ["g"], types: [.entry, .exit]),
                secret: "alpha-secret-0123456789", createdAt: Date(timeIntervalSince1970: 1_700_000_000.25)), state: alpha),
            StoredWebhook(registration: WebhookRegistration(
                id: "gamma", url: "http://example.org/g", filter: WebhookFilter(types: [.dwell]),
                secret: "gamma-secret-0123456789ab", createdAt: Date(timeIntervalSince1970: 1_700_000_040)), state: gamma),
            StoredWebhook(registration: WebhookRegistration(
                id: "beta", url: "http://10.0.0.1:8080/hook", secret: "beta-secret-0123456789ab",
                createdAt: Date(timeIntervalSince1970: 1_700_000_100)), state: WebhookDeliveryState(cursor: 0)),
        ]
    }

    static let deadLetters: [String: [DeadLetter]] = [
        "wh_alpha": [
            DeadLetter(sequence: 7, eventID: "ev-7", attempts: 5, firstAttemptAt: Date(timeIntervalSince1970: 1_700_000_010),
                       failedAt: Date(timeIntervalSince1970: 1_700_000_080.5), lastError: "HTTP 500"),
            DeadLetter(sequence: 9, eventID: "ev-9", attempts: 12, firstAttemptAt: Date(timeIntervalSince1970: 1_700_000_011.5),
                       failedAt: Date(timeIntervalSince1970: 1_700_000_085), lastError: "connection refused", redriveRequested: true),
        ],
        "gamma": [
            DeadLetter(sequence: 3, eventID: "", attempts: 0, firstAttemptAt: Date(timeIntervalSince1970: 1_700_000_060),
                       failedAt: Date(timeIntervalSince1970: 1_700_000_060), lastError: "event 3 is not in the event log"),
        ],
        "beta": [],
    ]
}

/// A version-1 row that must not migrate: the SQL that adds it, and what the error must say.
struct CorruptRow: CustomTestStringConvertible, Sendable {
    let name: String
    let sql: String
    let problem: String
    var testDescription: String { name }

    static let all: [CorruptRow] = [
        CorruptRow(name: "registration not JSON", sql: #"""
            INSERT INTO webhook VALUES ('bad', 9, '{"id":"bad","url":', '{"cursor":1}');
            """#, problem: "its registration is not valid JSON"),
        CorruptRow(name: "registration without secret", sql: #"""
            INSERT INTO webhook VALUES ('bad', 9, '{"createdAtSeconds":1,"filter":{},"id":"bad","url":"http://e.test/"}', '{"cursor":1}');
            """#, problem: "its registration has no secret"),
        CorruptRow(name: "registration of another id", sql: #"""
            INSERT INTO webhook VALUES ('bad', 9, '{"createdAtSeconds":1,"filter":{},"id":"other","secret":"s-0123456789abcdef","url":"http://e.test/"}', '{"cursor":1}');
            """#, problem: #"its registration names the id "other""#),
        CorruptRow(name: "unknown event type", sql: #"""
            INSERT INTO webhook VALUES ('bad', 9, '{"createdAtSeconds":1,"filter":{"types":["teleport"]},"id":"bad","secret":"s-0123456789abcdef","url":"http://e.test/"}', '{"cursor":1}');
            """#, problem: #"unknown event type "teleport""#),
        CorruptRow(name: "cursor as text", sql: #"""
            INSERT INTO webhook VALUES ('bad', 9, '{"createdAtSeconds":1,"filter":{},"id":"bad","secret":"s-0123456789abcdef","url":"http://e.test/"}', '{"cursor":"12"}');
            """#, problem: #"its delivery state has cursor "12", not an integer"#),
        CorruptRow(name: "incomplete pending delivery", sql: #"""
            INSERT INTO webhook VALUES ('bad', 9, '{"createdAtSeconds":1,"filter":{},"id":"bad","secret":"s-0123456789abcdef","url":"http://e.test/"}', '{"cursor":1,"pending":{"sequence":2}}');
            """#, problem: "its delivery state's pending has no attempts"),
        CorruptRow(name: "negative cursor", sql: #"""
            INSERT INTO webhook VALUES ('bad', 9, '{"createdAtSeconds":1,"filter":{},"id":"bad","secret":"s-0123456789abcdef","url":"http://e.test/"}', '{"cursor":-4}');
            """#, problem: "a value breaks a rule of version 2"),
        CorruptRow(name: "dead letter without event id", sql: #"""
            INSERT INTO dead_letter VALUES ('beta', 11, 0, '{"attempts":1,"failedAt":2,"firstAttemptAt":1,"sequence":11}');
            """#, problem: "its dead letter 11 has no eventId"),
        CorruptRow(name: "dead letter of no webhook", sql: #"""
            INSERT INTO dead_letter VALUES ('gone', 4, 0, '{"attempts":1,"eventId":"e","failedAt":2,"firstAttemptAt":1,"sequence":4}');
            """#, problem: "its dead letter 4 has no webhook row"),
    ]

    /// The webhook the error must name.
    var webhook: String { sql.contains("INSERT INTO dead_letter VALUES ('beta'") ? "beta" : sql.contains("'gone'") ? "gone" : "bad" }
}

@Suite("SQLite webhook store: schema version 2 and the migration from version 1")
struct StoreMigrationTests {
    @Test("a version-1 file migrates to version 2: every registration, cursor, counter and dead letter reads back equal")
    func migratesVersion1() throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        try Version1File.write(path)

        let store = try SQLiteWebhookStore(path: path)
        #expect(try store.webhooks() == Version1File.webhooks)
        for (id, letters) in Version1File.deadLetters {
            #expect(try store.deadLetters(for: id, after: 0, limit: 100) == letters, "\(id)")
            #expect(try store.deadLetterCount(for: id) == letters.count, "\(id)")
        }
        #expect(try store.nextRedrive(for: "wh_alpha")?.sequence == 9)
        // Registration order continues after the migrated webhooks.
        try store.insert(WebhookRegistration(id: "delta", url: "http://e.test/d", secret: "delta-secret-0123456789",
                                             createdAt: Date(timeIntervalSince1970: 1_700_000_200)), state: WebhookDeliveryState(cursor: 50))
        #expect(try store.webhooks().map(\.registration.id) == ["wh_alpha", "gamma", "beta", "delta"])
        store.close()

        let raw = try RawFile(path)
        defer { raw.close() }
        #expect(try raw.integer("PRAGMA user_version") == 2)
        #expect(try raw.rows("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", columns: 1)
                == [["dead_letter"], ["webhook"], ["webhook_filter"]])
        let columns = try raw.rows("SELECT name FROM pragma_table_info('webhook')", columns: 1).compactMap(\.first)
        #expect(!columns.contains("registration") && !columns.contains("state") && columns.contains("cursor"))
        #expect(try raw.rows("SELECT member, value FROM webhook_filter WHERE webhook = 'wh_alpha' ORDER BY member, value", columns: 2)
                == [["device", "d1"], ["device", "d2"], ["fence", "a"], ["fence", "b"], ["group", "g"], ["type", "entry"], ["type", "exit"]])
        #expect(try raw.rows("SELECT typeof(cursor), typeof(delivered), typeof(created_at), typeof(pending_redrive) FROM webhook WHERE id = 'wh_alpha'",
                             columns: 4) == [["integer", "integer", "real", "integer"]])
    }

    @Test("a version-1 row that cannot be read fails the migration, names the webhook, and leaves the file at version 1, unchanged",
          arguments: CorruptRow.all)
    func corruptRowFailsTheMigration(row: CorruptRow) throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        try Version1File.write(path, extra: row.sql)
        let before = try RawFile(path)
        let snapshot = try before.version1Snapshot()
        before.close()

        do {
            let store = try SQLiteWebhookStore(path: path)
            store.close()
            Issue.record("the corrupt row was migrated")
        } catch {
            #expect(error.code == .incompatibleStorage)
            #expect(error.message.contains(#"webhook "\#(row.webhook)" cannot be migrated from webhook schema version 1 to 2"#), "\(error.message)")
            #expect(error.message.contains(row.problem), "\(error.message)")
            #expect(error.message.contains(path))
        }

        let after = try RawFile(path)
        #expect(try after.version1Snapshot() == snapshot)
        #expect(try after.integer("PRAGMA user_version") == 1)
        after.close()
        // Once the row is repaired, the same file migrates.
        let repair = try RawFile(path)
        try repair.db.execute("DELETE FROM webhook WHERE id = 'bad'; DELETE FROM dead_letter WHERE sequence IN (4, 11)")
        repair.close()
        let store = try SQLiteWebhookStore(path: path)
        #expect(try store.webhooks() == Version1File.webhooks)
        store.close()
    }

    @Test("every field of the model round-trips through the typed columns, across a reopen")
    func roundTripsVersion2() throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        let store = try SQLiteWebhookStore(path: path)
        for webhook in Version1File.webhooks {
            try store.insert(webhook.registration, state: WebhookDeliveryState(cursor: webhook.state.cursor))
            try store.save(webhook.state, for: webhook.registration.id)
            for letter in Version1File.deadLetters[webhook.registration.id] ?? [] {
                try store.save(webhook.state, for: webhook.registration.id, deadLetter: letter)
            }
        }
        #expect(try store.requestRedrive(for: "wh_alpha", sequences: [9]) == 1)
        #expect(try store.webhooks() == Version1File.webhooks)
        store.close()

        let reopened = try SQLiteWebhookStore(path: path)
        #expect(try reopened.webhooks() == Version1File.webhooks)
        for (id, letters) in Version1File.deadLetters {
            #expect(try reopened.deadLetters(for: id, after: 0, limit: 100) == letters, "\(id)")
        }
        // A webhook's filter and dead letters go with it.
        #expect(try reopened.delete(id: "wh_alpha"))
        reopened.close()
        let raw = try RawFile(path)
        #expect(try raw.integer("SELECT count(*) FROM webhook_filter WHERE webhook = 'wh_alpha'") == 0)
        #expect(try raw.integer("SELECT count(*) FROM dead_letter WHERE webhook = 'wh_alpha'") == 0)
        #expect(try raw.integer("SELECT count(*) FROM webhook_filter WHERE webhook = 'gamma'") == 1)
        raw.close()
    }

    @Test("the CHECK constraints refuse what the model never holds, and the refused write changes nothing")
    func constraintsRefuseImpossibleValues() throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        let store = try SQLiteWebhookStore(path: path)
        let webhook = Version1File.webhooks[0]
        try store.insert(webhook.registration, state: webhook.state)
        var negative = webhook.state
        negative.counters.delivered = -1
        var stale = webhook.state
        stale.cursor = -1
        for state in [negative, stale] {
            #expect(throws: WebhookError.self) { try store.save(state, for: webhook.registration.id) }
        }
        let letter = DeadLetter(sequence: 0, eventID: "e", attempts: 1, firstAttemptAt: Date(), failedAt: Date(), lastError: "x")
        #expect(throws: WebhookError.self) { try store.save(WebhookDeliveryState(cursor: 99), for: webhook.registration.id, deadLetter: letter) }
        #expect(try store.webhook(id: webhook.registration.id) == webhook, "the refused saves rolled back")
        store.close()

        // A half-set pending delivery, a flag that is not 0 or 1, a text cursor (STRICT).
        let raw = try RawFile(path)
        for sql in ["UPDATE webhook SET pending_sequence = NULL", "UPDATE webhook SET pending_redrive = 2",
                    "UPDATE webhook SET cursor = 'twelve'", "INSERT INTO dead_letter VALUES ('nobody', 1, 'e', 1, 0, 0, '', 0)",
                    "INSERT INTO webhook_filter VALUES ('\(webhook.registration.id)', 'colour', 'red')"] {
            #expect(throws: DatabaseError.self, "\(sql)") { try raw.db.execute("PRAGMA foreign_keys = ON; " + sql) }
        }
        raw.close()
    }

    @Test("opening a version-2 file again changes nothing")
    func reopeningIsANoOp() throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        try Version1File.write(path)
        try SQLiteWebhookStore(path: path).close()  // migrates
        let raw = try RawFile(path)
        let schema = try raw.rows("SELECT type, name, sql FROM sqlite_master ORDER BY name", columns: 3)
        let schemaVersion = try raw.integer("PRAGMA schema_version")
        let rows = try raw.rows("SELECT * FROM webhook ORDER BY id", columns: 18)
        raw.close()

        for _ in 0..<2 {
            let store = try SQLiteWebhookStore(path: path)
            #expect(try store.webhooks() == Version1File.webhooks)
            store.close()
        }
        let again = try RawFile(path)
        #expect(try again.integer("PRAGMA user_version") == 2)
        #expect(try again.integer("PRAGMA schema_version") == schemaVersion, "no DDL ran")
        #expect(try again.rows("SELECT type, name, sql FROM sqlite_master ORDER BY name", columns: 3) == schema)
        #expect(try again.rows("SELECT * FROM webhook ORDER BY id", columns: 18) == rows)
        again.close()
    }

    @Test("a file of a newer schema version is refused, named, and left untouched")
    func refusesNewerVersion() throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        let raw = try RawFile(path)
        try raw.db.execute("CREATE TABLE future (x); PRAGMA application_id = 1347573576; PRAGMA user_version = 3;")
        raw.close()

        do {
            try SQLiteWebhookStore(path: path).close()
            Issue.record("a version-3 file was opened")
        } catch {
            #expect(error.code == .incompatibleStorage)
            #expect(error.message.contains("schema version 3"), "\(error.message)")
            #expect(error.message.contains("supports up to 2"), "\(error.message)")
            #expect(error.message.contains("left untouched"), "\(error.message)")
        }
        let after = try RawFile(path)
        #expect(try after.integer("PRAGMA user_version") == 3)
        #expect(try after.rows("SELECT name FROM sqlite_master", columns: 1) == [["future"]])
        after.close()
    }

    @Test("each store refuses the other's file and a newer webhook schema, names the problem, and leaves the file untouched")
    func storesRefuseEachOthersFiles() throws {
        let folder = TemporaryFolder()
        let geofencing = folder.path("store.sqlite")
        try SQLiteGeofencingStore(path: geofencing).close()
        let hooks = folder.path("hooks.sqlite")
        try SQLiteWebhookStore(path: hooks).close()
        try SQLiteWebhookStore(path: hooks).close()  // reopening its own file works
        let raw = try RawFile(hooks)
        try raw.db.execute("PRAGMA user_version = 42")
        raw.close()

        let refusals: [(path: String, problem: String, open: (String) throws -> Void)] = [
            (geofencing, "not a Perimeter webhook database", { try SQLiteWebhookStore(path: $0).close() }),
            (hooks, "schema version 42", { try SQLiteWebhookStore(path: $0).close() }),
            (hooks, "not a Perimeter store", { try SQLiteGeofencingStore(path: $0).close() }),
        ]
        for refusal in refusals {
            let before = try Data(contentsOf: URL(fileURLWithPath: refusal.path))
            do {
                try refusal.open(refusal.path)
                Issue.record("expected \(refusal.path) to be refused (\(refusal.problem))")
            } catch let error as GeofencingError {
                #expect(error.code == .incompatibleStorage, "\(error)")
                #expect(error.message.contains(refusal.problem), "\(error.message)")
            }
            #expect(try Data(contentsOf: URL(fileURLWithPath: refusal.path)) == before, "\(refusal.problem): the file is left untouched")
        }
    }

    @Test("a new webhook file keeps SQLite's default 4 KiB pages (the geofencing store's 1 KiB is for its commits)")
    func pageSize() throws {
        let folder = TemporaryFolder()
        let path = folder.path("fresh.webhooks")
        try SQLiteWebhookStore(path: path).close()
        let raw = try RawFile(path)
        #expect(try raw.integer("PRAGMA page_size") == 4096)
        raw.close()
    }

    @Test("a filter row of an event type this build does not know is reported, naming the webhook and the type")
    func unknownFilterTypeIsReported() throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        let store = try SQLiteWebhookStore(path: path)
        try store.insert(Version1File.webhooks[0].registration, state: Version1File.webhooks[0].state)
        let raw = try RawFile(path)
        try raw.db.execute("INSERT INTO webhook_filter VALUES ('wh_alpha', 'type', 'teleport')")
        raw.close()
        for read in [{ _ = try store.webhooks() }, { _ = try store.webhook(id: "wh_alpha") }] as [() throws -> Void] {
            do {
                try read()
                Issue.record("the unknown event type was read")
            } catch let error as WebhookError {
                #expect(error.code == .storageFailure)
                #expect(error.message.contains(#"webhook wh_alpha filters on the unknown event type "teleport""#), "\(error.message)")
            }
        }
        store.close()
    }
}
