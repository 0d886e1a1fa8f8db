import PerimeterService

extension Database {
    /// What a store expects of its file: the application id it stamps, the schema versions it knows,
    /// and how to name the file in messages.
    public struct Ownership: Sendable {
        /// `PRAGMA application_id` of the store's files.
        public var applicationID: Int64
        /// The newest schema version this build can read.
        public var supportedVersion: Int64
        /// What the file should be, for messages ("a Perimeter store").
        public var description: String
        /// What to do when the file belongs to someone else.
        public var foreignAdvice: String

        /// Describes a store's files.
        public init(applicationID: Int64, supportedVersion: Int64, description: String, foreignAdvice: String) {
            self.applicationID = applicationID
            self.supportedVersion = supportedVersion
            self.description = description
            self.foreignAdvice = foreignAdvice
        }
    }

    /// Checks that the open file is empty or one of the store's own, at a schema version this build
    /// can read; the file is not changed.
    /// - Returns: the file's schema version and its number of schema objects.
    /// - Throws: ``GeofencingError/Code/incompatibleStorage`` for another application's database or
    ///   a newer schema; `DatabaseError` for anything SQLite refuses.
    public func checkOwnership(path: String, _ ownership: Ownership) throws -> (version: Int64, schemaObjects: Int64) {
        let applicationID = try integer("PRAGMA application_id") ?? 0
        let version = try integer("PRAGMA user_version") ?? 0
        let objects = try integer("SELECT count(*) FROM sqlite_master") ?? 0
        if applicationID != ownership.applicationID && (applicationID != 0 || objects > 0) {
            throw GeofencingError(.incompatibleStorage,
                                  "\(path) is an SQLite database of another application (application id \(applicationID), \(objects) schema objects), not \(ownership.description); it was left untouched. \(ownership.foreignAdvice)")
        }
        if version > ownership.supportedVersion {
            throw GeofencingError(.incompatibleStorage,
                                  "\(path) has schema version \(version), written by a newer Perimeter (this one supports up to \(ownership.supportedVersion)); it was left untouched. Upgrade Perimeter")
        }
        return (version, objects)
    }

    /// Switches the connection to write-ahead logging with `synchronous`, then brings a schema at
    /// `version` up to `migrations.count` (migration *n* turns version *n − 1* into *n*) and stamps
    /// `applicationID` and the new version, all in one transaction.
    ///
    /// The caller has already checked that the file belongs to it and is not newer than `migrations`.
    /// - Parameter newFilePageSize: the page size in bytes for a file that has no schema yet (a power of
    ///   two from 512 to 65,536). A file's page size is fixed once its first page is written (SQLite
    ///   cannot change it in write-ahead-log mode), so existing files keep theirs.
    /// - Throws: ``GeofencingError/Code/storageFailure`` when the file system cannot do write-ahead
    ///   logging; `DatabaseError` for anything SQLite refuses.
    func useWriteAheadLogAndMigrate(path: String, synchronous: SQLiteGeofencingStore.Synchronous, from version: Int64,
                                    migrations: [String], applicationID: Int64, newFilePageSize: Int? = nil) throws {
        try useWriteAheadLogAndMigrate(path: path, synchronous: synchronous, from: version, migrations: migrations.map(Migration.sql),
                                       applicationID: applicationID, newFilePageSize: newFilePageSize)
    }

    /// As the SQL-only form above, with steps that may be Swift code: an error a step throws rolls back
    /// every step of this opening and reaches the caller unchanged, so the file keeps its version and
    /// contents.
    public func useWriteAheadLogAndMigrate(path: String, synchronous: SQLiteGeofencingStore.Synchronous, from version: Int64,
                                           migrations: [Migration], applicationID: Int64, newFilePageSize: Int? = nil) throws {
        if let newFilePageSize {
            try execute("PRAGMA page_size = \(newFilePageSize)")
        }
        let mode = try text("PRAGMA journal_mode = WAL") ?? ""
        guard mode.lowercased() == "wal" else {
            throw GeofencingError(.storageFailure, "\(path) cannot use write-ahead logging (journal mode is \(mode)); put it on a local file system")
        }
        try execute("PRAGMA synchronous = \(synchronous.rawValue)")
        guard version < Int64(migrations.count) else { return }
        try inTransaction {
            for (index, migration) in migrations.enumerated() where Int64(index) >= version {
                try migration.apply(self)
            }
            try execute("PRAGMA application_id = \(applicationID)")
            try execute("PRAGMA user_version = \(migrations.count)")
        }
    }
}

/// One step of a store's schema: migration *n* turns version *n − 1* into version *n*. Most steps are
/// SQL; a step that must read and check what the previous version stored (JSON documents, say) is
/// Swift, so it can refuse a row it cannot convert with an error naming that row.
public struct Migration: Sendable {
    /// Runs the step on the connection, inside the migrating transaction.
    public let apply: @Sendable (Database) throws -> Void

    /// A step that runs `apply` (Swift code) on the connection, inside the migrating transaction.
    public init(apply: @escaping @Sendable (Database) throws -> Void) {
        self.apply = apply
    }

    /// A step that executes `sql` (one or more statements).
    public static func sql(_ sql: String) -> Migration {
        Migration { try $0.execute(sql) }
    }
}
