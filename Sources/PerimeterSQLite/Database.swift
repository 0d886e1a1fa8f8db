internal import CSQLite

/// One SQLite connection: executes SQL, caches prepared statements (finalized on close) and runs
/// transactions that roll back on error.
///
/// Not thread-safe: a store gives its connection to one ``DatabaseOwner``, which serialises every use
/// of it. Errors are ``DatabaseError``s naming the file and the SQL.
public final class Database {
    private(set) var handle: OpaquePointer?
    /// The database file.
    public let path: String
    private var statements: [String: Statement] = [:]
    /// Statements of SQL literals, keyed by the literal's address: cheaper to find than by hashing the text.
    private var literalStatements: [UnsafeRawPointer: Statement] = [:]
    /// Statements of ``SQLText``s, keyed by the object (held here, so its identity is not reused).
    private var textStatements: [ObjectIdentifier: (text: SQLText, statement: Statement)] = [:]

    /// Opens the database at `path`, creating it when missing unless `readOnly`. Waits up to five seconds
    /// for another connection's lock, and refuses SQL that could corrupt the file (`SQLITE_DBCONFIG_DEFENSIVE`).
    /// - Throws: ``DatabaseError`` when the file cannot be opened.
    public init(path: String, readOnly: Bool = false) throws(DatabaseError) {
        self.path = path
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
            | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        // Through the coalescing VFS when it could be registered (it forwards to the default VFS, and
        // only gathers writes while a bulk commit asks it to: ``setCoalescingWrites(_:)``).
        let code = Self.bulkVFSRegistered
            ? sqlite3_open_v2(path, &db, flags, perimeter_bulk_vfs_name())
            : sqlite3_open_v2(path, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(db)
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, path: path)
        }
        handle = db
        sqlite3_busy_timeout(db, 5_000)
        _ = perimeter_sqlite3_db_config_defensive(db, 1)
    }

    deinit { close() }

    /// Whether the coalescing VFS is registered (once per process, before the first connection).
    private static let bulkVFSRegistered = perimeter_bulk_vfs_register() == SQLITE_OK

    /// Starts or stops gathering consecutive writes to the main database file into writes of up to
    /// 64 KiB (stopping writes out what is gathered). For a transaction that appends thousands of pages
    /// under a rollback journal: each page was a system call of its own. What is gathered reaches the
    /// file before any other operation on it — a read, a sync, a lock change — so syncs and reads see
    /// every write, and a write that fails fails the operation that flushed it.
    /// - Returns: whether the connection can gather writes (`false`: it writes each page as usual).
    /// - Throws: ``DatabaseError`` when writing out the gathered bytes fails.
    @discardableResult
    public func setCoalescingWrites(_ on: Bool) throws(DatabaseError) -> Bool {
        guard let handle else { return false }
        let code = perimeter_bulk_coalesce(handle, on ? 1 : 0)
        if code == SQLITE_NOTFOUND { return false }
        guard code == SQLITE_OK else { throw error(code) }
        return true
    }

    /// Checkpoints the write-ahead log after any commit that leaves it holding `pages` pages or more,
    /// as `PRAGMA wal_autocheckpoint` does, with the checkpoint's writes to the database file gathered
    /// into writes of up to 64 KiB (CSQLite's shim, `perimeter_checkpoint_hook`).
    public func setAutomaticCheckpoint(pages: Int32) {
        guard let handle else { return }
        perimeter_wal_autocheckpoint(handle, pages)
    }

    /// Finalizes every cached statement and closes the connection (idempotent).
    public func close() {
        for statement in statements.values { statement.finalize() }
        for statement in literalStatements.values { statement.finalize() }
        for entry in textStatements.values { entry.statement.finalize() }
        statements = [:]
        literalStatements = [:]
        textStatements = [:]
        if let handle { sqlite3_close_v2(handle) }
        handle = nil
    }

    func error(_ code: Int32, sql: String? = nil) -> DatabaseError {
        let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql, path: path)
    }

    /// Executes one or more SQL statements that return no rows.
    public func execute(_ sql: String) throws(DatabaseError) {
        guard handle != nil else { throw DatabaseError(resultCode: .misuse, message: "the database is closed", sql: sql, path: path) }
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql: sql) }
    }

    /// The cached prepared statement for `sql`, reset and with bindings cleared.
    public func statement(_ sql: String) throws(DatabaseError) -> Statement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        guard handle != nil else { throw DatabaseError(resultCode: .misuse, message: "the database is closed", sql: sql, path: path) }
        let statement = try Statement(database: self, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// The cached prepared statement for the SQL literal `sql`, reset and with bindings cleared; for hot
    /// paths (found by the literal's address, without hashing its text).
    public func statement(literal sql: StaticString) throws(DatabaseError) -> Statement {
        let key = UnsafeRawPointer(sql.utf8Start)
        if let cached = literalStatements[key] {
            cached.reset()
            return cached
        }
        let text = sql.description
        guard handle != nil else { throw DatabaseError(resultCode: .misuse, message: "the database is closed", sql: text, path: path) }
        let statement = try Statement(database: self, sql: text)
        literalStatements[key] = statement
        return statement
    }

    /// The cached prepared statement for `text`, reset and with bindings cleared; for hot paths whose
    /// SQL is made at run time (found by the object, without hashing its text: a statement of 32 rows
    /// is kilobytes, and hashing a `String` costs ≈ 10 instructions a byte).
    func statement(_ text: SQLText) throws(DatabaseError) -> Statement {
        let key = ObjectIdentifier(text)
        if let cached = textStatements[key] {
            cached.statement.reset()
            return cached.statement
        }
        guard handle != nil else { throw DatabaseError(resultCode: .misuse, message: "the database is closed", sql: text.sql, path: path) }
        let statement = try Statement(database: self, sql: text.sql)
        textStatements[key] = (text, statement)
        return statement
    }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    public var changes: Int32 { sqlite3_changes(handle) }

    /// The rowid of the last row this connection inserted (0 when none); set it (to 0, say) to tell
    /// afterwards whether a statement inserted a row.
    public var lastInsertRowID: Int64 {
        get { sqlite3_last_insert_rowid(handle) }
        set { sqlite3_set_last_insert_rowid(handle, newValue) }
    }

    /// Sets how long a statement waits for another connection's lock before failing with `SQLITE_BUSY`.
    public func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// The first column of the first row of `sql` as an integer, or `nil` when there is no row.
    public func integer(_ sql: String) throws(DatabaseError) -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// The first column of the first row of the SQL literal `sql` as an integer, or `nil` when there is
    /// no row; for hot paths (the statement found as by ``statement(literal:)``).
    public func integer(literal sql: StaticString) throws(DatabaseError) -> Int64? {
        let statement = try statement(literal: sql)
        defer { statement.reset() }
        return try statement.step() ? statement.int64(0) : nil
    }

    /// The first column of the first row of `sql` as text, or `nil` when there is no row.
    public func text(_ sql: String) throws(DatabaseError) -> String? {
        let statement = try statement(sql)
        defer { statement.reset() }
        return try statement.step() ? statement.optionalString(0) : nil
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE`): commits when it returns, rolls back when it throws.
    /// `BEGIN` and `COMMIT` are cached prepared statements, not parsed again for every transaction.
    public func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try statement(literal: "BEGIN IMMEDIATE").execute()
        do {
            let result = try body()
            try statement(literal: "COMMIT").execute()
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

extension ResultCode {
    /// Library used incorrectly (for example a closed database).
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
}

/// SQL made once at run time, for `Database.statement(_: SQLText)`: each database finds its
/// prepared statement by this object rather than by the text. Make one per statement and keep it (a
/// `static let`); two objects with the same text are two cached statements.
final class SQLText: Sendable {
    /// The SQL.
    let sql: String

    /// Wraps `sql`.
    init(_ sql: String) { self.sql = sql }
}
