import CSQLite

extension Statement {
    /// Binds an optional integer (NULL for `nil`).
    func bind(_ value: Int64?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    /// Binds `bytes` as a BLOB at `index`, runs the statement to completion and unbinds it again (the
    /// bytes are bound without a copy, so they must not outlive this call).
    func execute(binding bytes: [UInt8], at index: Int32) throws(DatabaseError) {
        let code = bytes.withUnsafeBytes { raw -> Int32 in
            sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), nil)
            let code = sqlite3_step(handle)
            sqlite3_reset(handle)
            sqlite3_bind_null(handle, index)
            return code
        }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, sql: sql) }
    }

    /// The BLOB (or text) in `column` of the current row; empty for NULL.
    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
