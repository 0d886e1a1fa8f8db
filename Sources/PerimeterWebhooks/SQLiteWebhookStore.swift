import PerimeterService
import PerimeterSQLite

/// The durable ``WebhookStore``: the webhook dispatcher's tables in their own SQLite file (WAL mode),
/// one typed column per field of the model: one row per webhook (``WebhookRegistration`` and
/// ``WebhookDeliveryState``), one per ``WebhookFilter`` criterion, one per ``DeadLetter``
/// (docs/webhooks.md, "Storage").
///
/// The connection is owned by a `DatabaseOwner` (PerimeterSQLite), as the geofencing store's is: one
/// lock, transactions that roll back on error, one mapping of database errors. The file is marked with
/// its own application id (`PRWH`), so it cannot be mistaken for a geofencing store: give it a path of
/// its own (for example `state.sqlite.webhooks`).
public final class SQLiteWebhookStore: WebhookStore {
    /// "PRWH": marks a Perimeter webhook database.
    static let applicationID: Int64 = 0x5052_5748

    /// The migrations, in order; the schema version is their count.
    static let migrations: [Migration] = [
        // 1: registration and delivery state as JSON documents, dead letters as JSON documents.
        .sql("""
            CREATE TABLE webhook (
                id TEXT PRIMARY KEY, position INTEGER NOT NULL, registration TEXT NOT NULL, state TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE dead_letter (
                webhook TEXT NOT NULL, sequence INTEGER NOT NULL, redrive INTEGER NOT NULL, letter TEXT NOT NULL,
                PRIMARY KEY (webhook, sequence)) WITHOUT ROWID;
            """),
        // 2: one typed column per field (STRICT tables); the documents of version 1 are read, checked
        // and written as rows, and their tables dropped.
        Migration(apply: SQLiteWebhookStore.migrateToVersion2),
    ]

    /// The tables of schema version 2. STRICT: a column holds only values of its type.
    static let version2Tables = """
        CREATE TABLE webhook (
            id TEXT NOT NULL PRIMARY KEY CHECK (id <> ''),
            position INTEGER NOT NULL UNIQUE,
            url TEXT NOT NULL CHECK (url <> ''),
            secret TEXT NOT NULL CHECK (secret <> ''),
            created_at REAL NOT NULL,
            cursor INTEGER NOT NULL CHECK (cursor >= 0),
            delivered INTEGER NOT NULL CHECK (delivered >= 0),
            failed_attempts INTEGER NOT NULL CHECK (failed_attempts >= 0),
            dead_lettered INTEGER NOT NULL CHECK (dead_lettered >= 0),
            last_error TEXT,
            last_error_at REAL,
            last_success_at REAL,
            pending_sequence INTEGER CHECK (pending_sequence > 0),
            pending_redrive INTEGER CHECK (pending_redrive IN (0, 1)),
            pending_attempts INTEGER CHECK (pending_attempts >= 0),
            pending_first_attempt_at REAL,
            pending_next_attempt_at REAL,
            pending_last_error TEXT,
            CHECK ((pending_sequence IS NULL) = (pending_redrive IS NULL)
                AND (pending_sequence IS NULL) = (pending_attempts IS NULL)
                AND (pending_sequence IS NULL) = (pending_first_attempt_at IS NULL)
                AND (pending_sequence IS NULL) = (pending_next_attempt_at IS NULL)
                AND (pending_sequence IS NULL) = (pending_last_error IS NULL))
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE webhook_filter (
            webhook TEXT NOT NULL REFERENCES webhook (id) ON DELETE CASCADE,
            member TEXT NOT NULL CHECK (member IN ('device', 'fence', 'group', 'type')),
            value TEXT NOT NULL CHECK (value <> ''),
            PRIMARY KEY (webhook, member, value)
        ) STRICT, WITHOUT ROWID;
        CREATE TABLE dead_letter (
            webhook TEXT NOT NULL REFERENCES webhook (id) ON DELETE CASCADE,
            sequence INTEGER NOT NULL CHECK (sequence > 0),
            event_id TEXT NOT NULL,
            attempts INTEGER NOT NULL CHECK (attempts >= 0),
            first_attempt_at REAL NOT NULL,
            failed_at REAL NOT NULL,
            last_error TEXT NOT NULL,
            redrive INTEGER NOT NULL CHECK (redrive IN (0, 1)),
            PRIMARY KEY (webhook, sequence)
        ) STRICT, WITHOUT ROWID;
        """

    let owner: DatabaseOwner<Database>
    /// The database file.
    public var path: String { owner.path }

    /// Opens (creating when missing or empty) the webhook database at `path`.
    ///
    /// A file of schema version 1 (JSON documents) is migrated to version 2 in one transaction; a row
    /// that cannot be read fails the migration and leaves the file as it was.
    ///
    /// - Throws: ``GeofencingError/Code/incompatibleStorage`` for a file of another application, a
    ///   newer schema, or a version-1 row that cannot be migrated (the error names the webhook; the file
    ///   is left untouched); ``GeofencingError/Code/storageFailure`` when it cannot be opened.
    public init(path: String, synchronous: SQLiteGeofencingStore.Synchronous = .normal) throws(GeofencingError) {
        owner = try DatabaseOwner(path: path, description: "the webhook database", prepare: { database in
            let (version, _) = try database.checkOwnership(path: path, Database.Ownership(
                applicationID: Self.applicationID, supportedVersion: Int64(Self.migrations.count),
                description: "a Perimeter webhook database", foreignAdvice: "Give the webhook store a file of its own"))
            // Filters and dead letters go with their webhook (ON DELETE CASCADE) and cannot outlive it.
            try database.execute("PRAGMA foreign_keys = ON")
            try database.useWriteAheadLogAndMigrate(path: path, synchronous: synchronous, from: version,
                                                    migrations: Self.migrations, applicationID: Self.applicationID)
        }, wrap: { $0 })
    }

    /// Closes the connection; later calls fail with ``WebhookError/Code/storageFailure``.
    public func close() {
        owner.close()
    }

    /// Runs `body` alone on the connection (in one transaction when `transaction`). A ``WebhookError``
    /// it throws passes unchanged (after the rollback); any other error becomes
    /// ``WebhookError/Code/storageFailure`` naming `action` and the file.
    func withDatabase<T>(_ action: String, transaction: Bool = false,
                         _ body: (Database) throws -> T) throws(WebhookError) -> T {
        do {
            return transaction ? try owner.inTransaction(action) { try body($0) } : try owner.withConnection(action) { try body($0) }
        } catch let error as WebhookError {
            throw error
        } catch let error as GeofencingError {
            throw WebhookError(.storageFailure, error.message)
        } catch {
            throw WebhookError(.storageFailure, "\(action) \(path) failed: \(error)")
        }
    }
}
