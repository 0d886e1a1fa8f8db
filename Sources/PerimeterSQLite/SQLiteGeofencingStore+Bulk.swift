import PerimeterService

extension SQLiteGeofencingStore {
    /// A commit whose fence texts add up to at least this many bytes is a bulk commit
    /// (``commit(_:)``): about 4,000 pages of 1 KiB, where the fixed cost of leaving and re-entering
    /// write-ahead logging (a few syncs) is small against what it saves.
    static let bulkCommitBytes = 4 << 20

    /// The bytes of fence text that `changes` writes.
    static func fenceTextBytes(_ changes: StoreChanges) -> Int {
        var total = 0
        for case .upsert(let fence) in changes.fences { total += fence.featureByteCount }
        return total
    }

    /// Runs `body` in one transaction shaped for writing megabytes of new rows (a fence import).
    ///
    /// In the write-ahead log every page of a commit is written twice: once into the log as a frame
    /// (a header, a checksum and two writes), and again when the checkpoint copies it into the database
    /// file (a read and a write). A fence import is almost all new overflow pages — 36 MB is about 36,000
    /// of them — so the log and its checkpoint were most of the import's SQLite time. Here, with the
    /// file locked for this store alone (``LockingMode/exclusive``), the transaction runs under a
    /// rollback journal instead: pages appended to the file need no journal (they did not exist before
    /// the transaction; a rollback cuts them off), so each is written once, where it stays. The journal
    /// holds only the original content of the few existing pages the transaction changes, and is synced
    /// before them (`synchronous = FULL` for this transaction: with a rollback journal, `NORMAL` could
    /// leave a file damaged by a power loss). Afterwards the store goes back to write-ahead logging.
    /// The appended pages are written at commit one after the other, each a system call of its own; the
    /// connection gathers them into writes of up to 64 KiB (``Database/setCoalescingWrites(_:)``), all
    /// written out before the commit's sync.
    ///
    /// What a commit promises is unchanged: it is atomic (a crash at any point leaves the file as before
    /// the transaction — the journal is rolled back on the next open — or as after it), and once it has
    /// returned it survives `kill -9` and, being synced, power loss too. Switching out of write-ahead
    /// logging first checkpoints the log (work a later commit would have done).
    ///
    /// In ``LockingMode/shared`` mode, where another connection may be reading the log, and whenever the
    /// switch is refused, the transaction runs in the write-ahead log as any other. Either way the page
    /// cache does not spill to the file in the middle of the transaction (`cache_spill = OFF`): spilled
    /// pages that change again are written again, and the cache grows only as far as the transaction
    /// needs (its pages are released as usual afterwards).
    func inBulkTransaction(_ connection: inout Connection, _ body: (inout Connection) throws -> Void) throws {
        let db = connection.db
        try db.execute("PRAGMA cache_spill = OFF")
        defer { try? db.execute("PRAGMA cache_spill = ON") }
        // Refused (a statement still running, an I/O error): the write-ahead log, as any commit.
        guard lockingMode == .exclusive, (try? Self.journalMode(db, "DELETE")) == "delete" else {
            return try db.inTransaction { try body(&connection) }
        }
        connection.outsideWriteAheadLog = true
        defer { try? restoreWriteAheadLog(&connection) }
        try db.execute("PRAGMA synchronous = FULL")
        // The new pages are written one after the other at commit, then synced: gathered into large
        // writes, all before the sync (Database.setCoalescingWrites).
        try db.setCoalescingWrites(true)
        defer { _ = try? db.setCoalescingWrites(false) }
        try db.inTransaction { try body(&connection) }
    }

    /// Puts a connection that a bulk commit left under a rollback journal back into write-ahead logging
    /// with the store's `synchronous` setting. If SQLite refuses (an I/O error creating the log), the
    /// connection stays under the journal with `synchronous = FULL` — every commit still atomic and
    /// durable — and the next commit tries again.
    func restoreWriteAheadLog(_ connection: inout Connection) throws {
        guard connection.outsideWriteAheadLog else { return }
        let mode = try Self.journalMode(connection.db, "WAL")
        guard mode == "wal" else {
            throw GeofencingError(.storageFailure, "\(path) could not return to write-ahead logging (journal mode is \(mode)); its commits stay synced under a rollback journal until it can")
        }
        connection.outsideWriteAheadLog = false
        try connection.db.execute("PRAGMA synchronous = \(synchronous.rawValue)")
    }

    /// Sets the journal mode; returns the mode SQLite reports afterwards (lowercase).
    private static func journalMode(_ db: Database, _ mode: String) throws -> String {
        (try db.text("PRAGMA journal_mode = \(mode)") ?? "").lowercased()
    }
}
