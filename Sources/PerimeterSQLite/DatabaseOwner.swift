import PerimeterService
import Synchronization

/// What a store keeps under its owner's lock: the connection, and whatever it remembers beside it.
public protocol DatabaseConnection {
    /// The SQLite connection.
    var db: Database { get }
}

extension Database: DatabaseConnection {
    /// The connection itself (a store that remembers nothing beside it).
    public var db: Database { self }
}

/// The one owner of a store's SQLite connection: it opens and prepares the file, serialises every use
/// of the connection behind one lock, runs transactions that roll back on error and turns database
/// errors into the service's ``GeofencingError``. ``SQLiteGeofencingStore`` and the webhook store
/// (PerimeterWebhooks) each hold one, so they open, lock, transact and report failures the same way.
///
/// `@unchecked Sendable`: the connection is touched only while `lock` is held (a `Mutex` holding the
/// connection itself would hand it to the callers' closures as `sending`, which they cannot honour).
public final class DatabaseOwner<Connection: DatabaseConnection>: @unchecked Sendable {
    /// The database file.
    public let path: String
    private let lock = Mutex(())
    private var connection: Connection

    /// Opens (creating when missing) the database at `path`, runs `prepare` on it (ownership check,
    /// migrations, pragmas) and wraps it with `wrap`; the connection is closed again when `prepare` fails.
    ///
    /// - Parameter description: what the file is, for messages (`the database`, `the webhook database`).
    /// - Throws: ``GeofencingError/Code/storageFailure`` when the file cannot be opened; a
    ///   ``GeofencingError`` that `prepare` throws, unchanged; a ``DatabaseError`` it throws as the
    ///   ``GeofencingError`` of opening the file (a damaged or foreign file is
    ///   ``GeofencingError/Code/incompatibleStorage``); any other error as ``GeofencingError/Code/storageFailure``.
    public init(path: String, description: String, prepare: (Database) throws -> Void,
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
            switch error {
            case let error as GeofencingError: throw error
            case let error as DatabaseError: throw GeofencingError(error, path: path, while: "opening \(description)")
            default: throw GeofencingError(.storageFailure, "opening \(description) \(path) failed: \(error)")
            }
        }
        connection = wrap(database)
    }

    /// Runs `body` alone on the connection; a ``DatabaseError`` it throws becomes a ``GeofencingError``
    /// naming `action` (`loading`, `committing to`, …) and the file, other errors pass unchanged.
    public func withConnection<T>(_ action: String, _ body: (inout Connection) throws -> T) throws -> T {
        do {
            return try lock.withLock { _ in try body(&connection) }
        } catch let error as DatabaseError {
            throw GeofencingError(error, path: path, while: action)
        }
    }

    /// Runs `body` alone on the connection in one transaction (`BEGIN IMMEDIATE`): committed when it
    /// returns, rolled back when it throws; errors as in ``withConnection(_:_:)``.
    public func inTransaction<T>(_ action: String, _ body: (inout Connection) throws -> T) throws -> T {
        try withConnection(action) { connection in
            try connection.db.inTransaction { try body(&connection) }
        }
    }

    /// Runs `finish` on the connection, then closes it; later uses fail with
    /// ``GeofencingError/Code/storageFailure``.
    public func close(_ finish: (inout Connection) -> Void = { _ in }) {
        lock.withLock { _ in
            finish(&connection)
            connection.db.close()
        }
    }
}

extension GeofencingError {
    /// The service's error for a database error while `action` on the file at `path`: a damaged or
    /// foreign file is incompatible storage, anything else a storage failure saying what to do.
    init(_ error: DatabaseError, path: String, while action: String) {
        switch error.resultCode.primary {
        case .notADatabase:
            self.init(.incompatibleStorage,
                      "\(path) is not an SQLite database (or is encrypted or damaged in its header); it was left untouched. Move it away or choose another path. (\(error))")
        case .corrupt:
            self.init(.incompatibleStorage,
                      "\(path) is damaged; it was left untouched. Restore it from a backup or move it away. (\(error))")
        case .full:
            self.init(.storageFailure, "the disk holding \(path) is full while \(action); free space and retry. (\(error))")
        case .busy, .locked:
            self.init(.storageFailure, "\(path) is locked by another process while \(action); only one service may use a store at a time. (\(error))")
        default:
            self.init(.storageFailure, "\(action) \(path) failed: \(error)")
        }
    }
}
