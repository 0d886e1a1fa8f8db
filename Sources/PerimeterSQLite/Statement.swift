import CSQLite

/// A prepared statement of a ``Database``; finalized when the database closes.
final class Statement {
    private(set) var handle: OpaquePointer?
    let sql: String
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

    func bind(_ value: Int64, at index: Int32) { sqlite3_bind_int64(handle, index, value) }

    func bind(_ value: Double, at index: Int32) { sqlite3_bind_double(handle, index, value) }

    func bind(_ value: String, at index: Int32) {
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

    func bind(_ value: Double?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ value: String?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    // MARK: Stepping

    /// Runs the statement to completion (for statements that return no rows), then resets it.
    func execute() throws(DatabaseError) {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, sql: sql) }
    }

    /// Steps once: `true` when a row is ready, `false` when done.
    func step() throws(DatabaseError) -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw database.error(code, sql: sql) }
        return false
    }

    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns (0-based)

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func double(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func optionalDouble(_ column: Int32) -> Double? { isNull(column) ? nil : double(column) }

    func string(_ column: Int32) -> String {
        guard let text = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func optionalString(_ column: Int32) -> String? { isNull(column) ? nil : string(column) }
}
