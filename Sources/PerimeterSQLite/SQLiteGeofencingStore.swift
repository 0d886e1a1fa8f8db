import Foundation
import PerimeterService
import Synchronization

/// A ``GeofencingStore`` in an SQLite database file: WAL mode, one transaction per commit (the
/// service batches updates into commits: group commit), schema versioned and migrated on open.
/// With ``LockingMode/exclusive`` the store keeps the file locked while it is open, which makes
/// every commit cheaper (no lock system calls, no shared-memory index) but shuts everyone else out.
///
/// Durability: a commit that returned survives the process being killed (`kill -9`) with either
/// ``Synchronous`` setting; with ``Synchronous/full`` it also survives a power loss or OS crash. With
/// ``Synchronous/normal`` (the default) an OS crash may roll back the last commits, never corrupt.
/// A bulk commit (megabytes of fences, an import) in an exclusive store runs under a rollback journal
/// with ``Synchronous/full`` instead, for speed; its guarantees are the same or stronger (``commit(_:)``).
/// See docs/service.md for the schema.
public final class SQLiteGeofencingStore: GeofencingStore {
    /// How hard SQLite works to make a commit durable (`PRAGMA synchronous`).
    public enum Synchronous: String, Hashable, Sendable {
        /// Durable against process crashes; the last commits may be lost on power loss (fast).
        case normal = "NORMAL"
        /// Durable against power loss too: every commit waits for the disk.
        case full = "FULL"
    }

    let owner: DatabaseOwner<Connection>
    /// The database file.
    public let path: String
    /// Whether other connections may open the file while this store is open.
    public let lockingMode: LockingMode
    /// How hard commits work to be durable.
    public let synchronous: Synchronous

    /// Opens the store at `path`, creating it when the file does not exist or is empty.
    ///
    /// - Parameters:
    ///   - verifyIntegrity: run `PRAGMA quick_check` on open (linear in the file size) so that a
    ///     damaged file is reported now rather than when the damaged page is read.
    ///   - lockingMode: ``LockingMode/shared`` (the default) lets others read the file meanwhile;
    ///     ``LockingMode/exclusive`` locks it until ``close()`` for cheaper commits.
    ///   - checkpointPages: how many pages (1 KiB in a file this version creates, 4 KiB in older files)
    ///     the write-ahead log may hold before the commit that
    ///     passes it copies them into the database file and syncs both (as SQLite's `wal_autocheckpoint`,
    ///     with the copy's writes gathered: ``Database/setAutomaticCheckpoint(pages:)``; at least 1). That commit — and every caller waiting for it — takes the checkpoint's time:
    ///     more pages mean rarer checkpoints that take longer each, and less time in checkpoints
    ///     overall, since pages changed again and again are copied once (docs/service.md).
    /// - Throws: ``GeofencingError/Code/incompatibleStorage`` for a file that is not an SQLite database,
    ///   a database of another application, a newer schema or a damaged file (the file is left as it
    ///   was); ``GeofencingError/Code/storageFailure`` when it cannot be opened or written, or (within
    ///   about half a second for ``LockingMode/exclusive``, five seconds otherwise) when another
    ///   connection holds it locked; ``GeofencingError/Code/invalidArgument`` for `checkpointPages` below 1.
    public init(path: String, synchronous: Synchronous = .normal, verifyIntegrity: Bool = true,
                lockingMode: LockingMode = .shared, checkpointPages: Int = 1_000) throws(GeofencingError) {
        guard checkpointPages >= 1 else {
            throw GeofencingError(.invalidArgument, "checkpointPages must be at least 1 (got \(checkpointPages))")
        }
        self.path = path
        self.lockingMode = lockingMode
        self.synchronous = synchronous
        owner = try DatabaseOwner(path: path, description: "the database", prepare: { database in
            try Self.prepare(database, path: path, synchronous: synchronous, verifyIntegrity: verifyIntegrity,
                             lockingMode: lockingMode, checkpointPages: checkpointPages)
        }, wrap: { Connection(db: $0, trustsMemory: lockingMode == .exclusive) })
    }

    /// Closes the connection; later calls fail with ``GeofencingError/Code/storageFailure``.
    public func close() {
        owner.close { $0.forget() }
    }

    /// Checks, migrates and tunes the freshly opened file; the owner turns what this throws into the
    /// store's error.
    private static func prepare(_ db: Database, path: String, synchronous: Synchronous,
                                verifyIntegrity: Bool, lockingMode: LockingMode, checkpointPages: Int) throws {
        if lockingMode == .exclusive {
            // Before the first read: the write-ahead log is then opened with its index in heap
            // memory and the file stays locked. A store that another one holds fails fast.
            db.setBusyTimeout(milliseconds: 500)
            _ = try db.text("PRAGMA locking_mode = EXCLUSIVE")
        }
        let (version, tables) = try db.checkOwnership(path: path, Database.Ownership(
            applicationID: Schema.applicationID, supportedVersion: Schema.version,
            description: "a Perimeter store", foreignAdvice: "Choose another path"))
        if verifyIntegrity, tables > 0 {
            let result = try db.text("PRAGMA quick_check") ?? "no result"
            guard result == "ok" else {
                throw GeofencingError(.incompatibleStorage,
                                      "\(path) is damaged (integrity check: \(result)); it was left untouched. Restore it from a backup or move it away")
            }
        }
        try db.useWriteAheadLogAndMigrate(path: path, synchronous: synchronous, from: version,
                                          migrations: Schema.steps, applicationID: Schema.applicationID,
                                          newFilePageSize: tables == 0 ? Schema.pageSize : nil)
        db.setAutomaticCheckpoint(pages: Int32(clamping: checkpointPages))
    }
}
