extension SQLiteGeofencingStore {
    /// Whether other connections may open the store's file while the store has it open
    /// (`PRAGMA locking_mode`).
    public enum LockingMode: String, Hashable, Sendable {
        /// Other connections (another store, the `sqlite3` shell) may read the file while the store is
        /// open; every transaction takes and releases SQLite's file locks (about six `fcntl` calls) and
        /// the write-ahead log's index lives in a shared-memory file (`-shm`). What the store remembers
        /// between commits (devices' keys, the end of the event log) is checked at every commit against
        /// `PRAGMA data_version` and forgotten when another connection has written meanwhile.
        case shared = "NORMAL"
        /// The store holds an exclusive lock on the file from opening to ``SQLiteGeofencingStore/close()``:
        /// no lock calls per transaction, the write-ahead log's index lives in the process's memory (no
        /// `-shm` file), and the store trusts what it remembers of the file (devices' keys, the end of
        /// the event log) without asking the database on every commit. Anyone else opening the file meanwhile — another store,
        /// another process, the `sqlite3` shell — fails with "database is locked" (a store reports
        /// ``GeofencingError/Code/storageFailure``) and cannot disturb it. Durability is unchanged: the
        /// log is replayed when the file is next opened after a crash.
        case exclusive = "EXCLUSIVE"
    }
}
