import PerimeterService
import Synchronization

/// What a store keeps under its lock: the connection, and whatever it remembers beside it.
protocol DatabaseConnection {
    /// The SQLite connection.
    var db: Database { get }
}

extension Database: DatabaseConnection {
    /// The connection itself (a store that remembers nothing beside it).
    var db: Database { self }
}

/// The one owner of a store's SQLite connection: it opens and prepares the file, serialises every use
/// of the connection behind one lock, runs transactions that roll back on error and turns database
/// errors into the service's ``GeofencingError``. ``SQLiteGeofencingStore`` and ``SQLiteWebhookStore``
/// both hold one, so they open, lock, transact and report failures the same way.
///
/// `@unchecked Sendable`: the connection is touched only while `lock` is held (a `Mutex` holding the
/// connection itself would hand it to the callers' closures as `sending`, which they cannot honour).
final class DatabaseOwner<Connection: DatabaseConnection>: @unchecked Sendable {
    /// The database file.
    let path: String
    private let lock = Mutex(())
    private var connection: Connection

    /// Opens (creating when missing) the database at `path`, runs `prepare` on it (ownership check,
    /// migrations, pragmas) and wraps it with `wrap`; the connection is closed again when `prepare` fails.
    ///
    /// - Parameter description: what the file is, for the error when it cannot be opened (`the database`).
    /// - Throws: ``GeofencingError/Code/storageFailure`` when the file cannot be opened; what
    ///   `prepare` throws otherwise.
    init(path: String, description: String, prepare: (Database) throws(GeofencingError) -> Void,
         wrap: (Database) -> Connection) throws(GeofencingError) {
        self.path = path
        let database: Database
        do {
            database = try Database(path: path)
        } catch {
            throw GeofencingError(.storageFailure, "cannot open \(description) \(path): \(error.message); check that the folder exists and is writable")
        }
        do {
            try prepare(database)
        } catch {
            database.close()
            throw error
        }
        connection = wrap(database)
    }

    /// Runs `body` alone on the connection; a ``DatabaseError`` it throws becomes a ``GeofencingError``
    /// naming `action` (`loading`, `committing to`, …), other errors pass unchanged.
    func withConnection<T>(_ action: String, _ body: (inout Connection) throws -> T) throws -> T {
        do {
            return try lock.withLock { _ in try body(&connection) }
        } catch let error as DatabaseError {
            throw SQLiteGeofencingStore.storeError(error, path: path, while: action)
        }
    }

    /// Runs `body` alone on the connection in one transaction (`BEGIN IMMEDIATE`): committed when it
    /// returns, rolled back when it throws; errors as in ``withConnection(_:_:)``.
    func inTransaction<T>(_ action: String, _ body: (inout Connection) throws -> T) throws -> T {
        try withConnection(action) { connection in
            try connection.db.inTransaction { try body(&connection) }
        }
    }

    /// Runs `finish` on the connection, then closes it; later uses fail with
    /// ``GeofencingError/Code/storageFailure``.
    func close(_ finish: (inout Connection) -> Void = { _ in }) {
        lock.withLock { _ in
            finish(&connection)
            connection.db.close()
        }
    }
}
