/// An error reported by SQLite, or by this module about a database's contents.
public struct DatabaseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// SQLite's (extended) result code; ``ResultCode/error`` for problems found by this module.
    public var resultCode: ResultCode
    /// What went wrong.
    public var message: String
    /// The SQL being executed, if any.
    public var sql: String?
    /// The database file, if known.
    public var path: String?

    /// Creates an error.
    public init(resultCode: ResultCode, message: String, sql: String? = nil, path: String? = nil) {
        self.resultCode = resultCode
        self.message = message
        self.sql = sql
        self.path = path
    }

    /// `SQLite error 11 (database disk image is malformed) in state.sqlite: … while executing "…"`
    public var description: String {
        var text = "SQLite error \(resultCode.rawValue)"
        if let path { text += " in \(path)" }
        text += ": \(message)"
        if let sql { text += " (while executing \"\(sql.count > 80 ? String(sql.prefix(80)) + "…" : sql)\")" }
        return text
    }
}
