internal import CSQLite
import Foundation

extension Statement {
    /// Binds an optional integer (NULL for `nil`).
    public func bind(_ value: Int64?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    /// Binds a flag as the integer 1 or 0 (SQLite has no boolean type); NULL for `nil`.
    public func bind(_ value: Bool?, at index: Int32) {
        bind(value.map { Int64($0 ? 1 : 0) }, at: index)
    }

    /// Binds a time as a REAL of seconds since 1970 (NULL for `nil`); ``date(_:)`` reads it back equal.
    public func bind(_ value: Date?, at index: Int32) {
        bind(value?.timeIntervalSince1970, at: index)
    }

    /// Binds bytes as a BLOB (copied by SQLite; NULL for `nil`).
    public func bind(_ bytes: [UInt8]?, at index: Int32) {
        guard let bytes else {
            sqlite3_bind_null(handle, index)
            return
        }
        bytes.withUnsafeBytes { raw in
            _ = perimeter_sqlite3_bind_blob_transient(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, Int32(raw.count))
        }
    }

    /// `column` of the current row as a flag: `true` for any integer but 0.
    public func bool(_ column: Int32) -> Bool { int64(column) != 0 }

    /// `column` of the current row as a time, from a REAL of seconds since 1970.
    public func date(_ column: Int32) -> Date { Date(timeIntervalSince1970: double(column)) }

    /// `column` of the current row as a time, `nil` for NULL.
    public func optionalDate(_ column: Int32) -> Date? { isNull(column) ? nil : date(column) }

    /// Binds `bytes` as a BLOB at `index`, runs the statement to completion and unbinds it again (the
    /// bytes are bound without a copy, so they must not outlive this call).
    public func execute(binding bytes: [UInt8], at index: Int32) throws(DatabaseError) {
        let code = bytes.withUnsafeBytes { raw -> Int32 in
            sqlite3_bind_blob(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count), nil)
            return stepThenUnbind(CollectionOfOne(index))
        }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, sql: sql) }
    }

    /// Binds `utf8` (which must be valid UTF-8; SQLite does not check) as TEXT at `index`, runs the
    /// statement to completion and unbinds it again: for large texts (fence features), which are bound
    /// without a copy, so they must not outlive this call.
    public func execute(bindingText utf8: UnsafeBufferPointer<UInt8>, at index: Int32) throws(DatabaseError) {
        utf8.withMemoryRebound(to: CChar.self) { chars in
            if let base = chars.baseAddress {
                _ = sqlite3_bind_text(handle, index, base, Int32(chars.count), nil)
            } else {
                _ = perimeter_sqlite3_bind_text_transient(handle, index, "", 0)
            }
        }
        let code = stepThenUnbind(CollectionOfOne(index))
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, sql: sql) }
    }

    /// Steps the statement to its end, resets it and binds NULL at `indices`, returning the step's result
    /// code: for values bound there without a copy, so that no pointer to their bytes stays bound after
    /// the caller's access to them ends.
    func stepThenUnbind<Indices: Sequence<Int32>>(_ indices: Indices) -> Int32 {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        for index in indices { sqlite3_bind_null(handle, index) }
        return code
    }

    /// The BLOB (or text) in `column` of the current row; empty for NULL.
    public func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }
}
