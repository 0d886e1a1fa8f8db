import PerimeterService

extension Database {
    /// Switches the connection to write-ahead logging with `synchronous`, then brings a schema at
    /// `version` up to `migrations.count` (migration *n* turns version *n − 1* into *n*) and stamps
    /// `applicationID` and the new version, all in one transaction.
    ///
    /// The caller has already checked that the file belongs to it and is not newer than `migrations`.
    /// - Throws: ``GeofencingError/Code/storageFailure`` when the file system cannot do write-ahead
    ///   logging; `DatabaseError` for anything SQLite refuses.
    func useWriteAheadLogAndMigrate(path: String, synchronous: SQLiteGeofencingStore.Synchronous, from version: Int64,
                                    migrations: [String], applicationID: Int64) throws {
        let mode = try text("PRAGMA journal_mode = WAL") ?? ""
        guard mode.lowercased() == "wal" else {
            throw GeofencingError(.storageFailure, "\(path) cannot use write-ahead logging (journal mode is \(mode)); put it on a local file system")
        }
        try execute("PRAGMA synchronous = \(synchronous.rawValue)")
        guard version < Int64(migrations.count) else { return }
        try inTransaction {
            for (index, migration) in migrations.enumerated() where Int64(index) >= version {
                try execute(migration)
            }
            try execute("PRAGMA application_id = \(applicationID)")
            try execute("PRAGMA user_version = \(migrations.count)")
        }
    }
}
