internal import CSQLite

/// A prepared statement of a ``Database``, from ``Database/statement(_:)``; finalized when the database
/// closes.
///
/// Parameters are bound by 1-based index (`?1`, `?2`, … in the SQL); columns of the current row are read
/// by 0-based index. A statement belongs to its database's owner: use it inside the owner's closure only.
public final class Statement {
    private(set) var handle: OpaquePointer?
    /// The statement's SQL.
    public let sql: String
    unowned let database: Database

    init(database: Database, sql: String) throws(DatabaseError) {
        self.database = database
        self.sql = sql
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(database.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw database.error(code, sql: sql)
        }
        handle = statement
    }

    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    // MARK: Binding (1-based indices, as in SQL)

    /// Binds an integer.
    public func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(handle, index, value) }

    /// Binds a floating-point number.
    public func bind(_ value: Double, at index: Int32) { sqlite3_bind_double(handle, index, value) }

    /// Binds text (copied by SQLite).
    public func bind(_ value: String, at index: Int32) {
        var text = value
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { chars in
                if let base = chars.baseAddress {
                    _ = perimeter_sqlite3_bind_text_transient(handle, index, base, Int32(chars.count))
                } else {
                    _ = perimeter_sqlite3_bind_text_transient(handle, index, "", 0)
                }
            }
        }
    }

    /// Binds an optional number (NULL for `nil`).
    public func bind(_ value: Double?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    /// Binds optional text (NULL for `nil`).
    public func bind(_ value: String?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    // MARK: Stepping

    /// Runs the statement to completion (for statements that return no rows), then resets it.
    public func execute() throws(DatabaseError) {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, sql: sql) }
    }

    /// Steps once: `true` when a row is ready, `false` when done.
    public func step() throws(DatabaseError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw database.error(code, sql: sql) }
        return false
    }

    /// Resets the statement to run again and clears its bindings (NULL).
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns (0-based)

    /// Whether `column` of the current row is NULL.
    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    /// Whether `column` of the current row holds a BLOB (a column without type affinity may hold a
    /// BLOB in some rows and text in others).
    public func isBlob(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_BLOB }

    /// Whether `column` of the current row holds an integer.
    public func isInteger(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_INTEGER }

    /// `column` of the current row as an integer (0 for NULL).
    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// `column` of the current row as a number (0 for NULL).
    public func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    /// `column` of the current row as a number, `nil` for NULL.
    public func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    /// `column` of the current row as text (empty for NULL).
    public func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// `column` of the current row as text, `nil` for NULL.
    public func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }
}
