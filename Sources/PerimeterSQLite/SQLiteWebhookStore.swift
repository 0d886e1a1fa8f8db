import PerimeterService
import Synchronization

/// The durable tables of the webhook dispatcher, in their own SQLite file (WAL mode): one row per
/// webhook (its registration and its delivery state, each a JSON document written by the server) and
/// one row per dead letter.
///
/// This module does not know the webhook model (it lives in PerimeterServer, which depends on this
/// module); PerimeterServer makes this class a `WebhookStore` by encoding its values as JSON.
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

    let connection: Mutex<Database>
    /// The database file.
    public let path: String

    /// Opens (creating when missing or empty) the webhook database at `path`.
    ///
    /// - Throws: ``GeofencingError/Code/incompatibleStorage`` for a file of another application or a
    ///   newer schema (left untouched); ``GeofencingError/Code/storageFailure`` when it cannot be opened.
    public init(path: String, synchronous: SQLiteGeofencingStore.Synchronous = .normal) throws(GeofencingError) {
        self.path = path
        let database: Database
        do {
            database = try Database(path: path)
        } catch {
            throw GeofencingError(.storageFailure, "cannot open the webhook database \(path): \(error.message); check that the folder exists and is writable")
        }
        do {
            try Self.prepare(database, path: path, synchronous: synchronous)
        } catch {
            database.close()
            throw error
        }
        connection = Mutex(database)
    }

    /// Closes the connection; later calls fail with ``GeofencingError/Code/storageFailure``.
    public func close() {
        connection.withLock { $0.close() }
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

    /// Runs `body` on the connection, turning database errors into ``GeofencingError``.
    func withDatabase<T: Sendable>(_ action: String, _ body: @Sendable (Database) throws -> T) throws(GeofencingError) -> T {
        do {
            return try connection.withLock { db in try body(db) }
        } catch let error as GeofencingError {
            throw error
        } catch let error as DatabaseError {
            throw SQLiteGeofencingStore.storeError(error, path: path, while: action)
        } catch {
            throw GeofencingError(.storageFailure, "\(action) \(path) failed: \(error)")
        }
    }
}
