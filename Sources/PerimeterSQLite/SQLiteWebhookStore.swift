import PerimeterService

/// The durable tables of the webhook dispatcher, in their own SQLite file (WAL mode): one row per
/// webhook (its registration and its delivery state, each a JSON document written by PerimeterWebhooks) and
/// one row per dead letter.
///
/// This module does not know the webhook model (it lives in PerimeterWebhooks, which depends on this
/// module); PerimeterWebhooks makes this class a `WebhookStore`. The connection is owned by a
/// `DatabaseOwner`, as the geofencing store's is.
/// The file is marked with its own application id (`PRWH`), so it cannot be mistaken for a
/// geofencing store: give it a path of its own (for example `state.sqlite.webhooks`).
public final class SQLiteWebhookStore: Sendable {
    /// "PRWH": marks a Perimeter webhook database.
    static let applicationID: Int64 = 0x5052_5748

    /// The migrations, in order; the schema version is their count.
    static let migrations: [String] = [
        """
        CREATE TABLE webhook (
            id TEXT PRIMARY KEY, position INTEGER NOT NULL, registration TEXT NOT NULL, state TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE dead_letter (
            webhook TEXT NOT NULL, sequence INTEGER NOT NULL, redrive INTEGER NOT NULL, letter TEXT NOT NULL,
            PRIMARY KEY (webhook, sequence)) WITHOUT ROWID;
        """,
    ]

    let owner: DatabaseOwner<Database>
    /// The database file.
    public var path: String { owner.path }

    /// Opens (creating when missing or empty) the webhook database at `path`.
    ///
    /// - Throws: ``GeofencingError/Code/incompatibleStorage`` for a file of another application or a
    ///   newer schema (left untouched); ``GeofencingError/Code/storageFailure`` when it cannot be opened.
    public init(path: String, synchronous: SQLiteGeofencingStore.Synchronous = .normal) throws(GeofencingError) {
        owner = try DatabaseOwner(path: path, description: "the webhook database", prepare: { (database) throws(GeofencingError) in
            try Self.prepare(database, path: path, synchronous: synchronous)
        }, wrap: { $0 })
    }

    /// Closes the connection; later calls fail with ``GeofencingError/Code/storageFailure``.
    public func close() {
        owner.close()
    }

    private static func prepare(_ db: Database, path: String,
                                synchronous: SQLiteGeofencingStore.Synchronous) throws(GeofencingError) {
        do {
            let (version, _) = try db.checkOwnership(path: path, Database.Ownership(
                applicationID: Self.applicationID, supportedVersion: Int64(migrations.count),
                description: "a Perimeter webhook database", foreignAdvice: "Give the webhook store a file of its own"))
            try db.useWriteAheadLogAndMigrate(path: path, synchronous: synchronous, from: version,
                                              migrations: migrations, applicationID: Self.applicationID)
        } catch let error as GeofencingError {
            throw error
        } catch let error as DatabaseError {
            throw SQLiteGeofencingStore.storeError(error, path: path, while: "opening the webhook database")
        } catch {
            throw GeofencingError(.storageFailure, "opening \(path) failed: \(error)")
        }
    }

    /// Runs `body` alone on the connection (in one transaction when `transaction`), turning every
    /// error into a ``GeofencingError`` naming `action`.
    func withDatabase<T>(_ action: String, transaction: Bool = false,
                         _ body: (Database) throws -> T) throws(GeofencingError) -> T {
        do {
            return transaction ? try owner.inTransaction(action) { try body($0) } : try owner.withConnection(action) { try body($0) }
        } catch let error as GeofencingError {
            throw error
        } catch {
            throw GeofencingError(.storageFailure, "\(action) \(path) failed: \(error)")
        }
    }
}
