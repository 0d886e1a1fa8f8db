internal import CSQLite

/// An SQLite result code (primary or extended), as returned by the C API.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The numeric code.
    public var rawValue: Int32

    /// Wraps a numeric code.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (an extended code's low 8 bits).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// SQLite's English text for the code.
    public var description: String { String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))" }

    /// Successful result.
    public static let ok = ResultCode(rawValue: SQLITE_OK)
    /// Generic error.
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// The database file is locked by another connection.
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// A table is locked.
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// Out of memory.
    public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
    /// Attempt to write a read-only database.
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    /// Disk I/O error.
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// The database disk image is malformed.
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// The disk is full.
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// Unable to open the database file.
    public static let cantOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// A constraint was violated.
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// Data type mismatch.
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    /// The file is not a database.
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    /// `sqlite3_step` has another row ready.
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    /// `sqlite3_step` has finished executing.
    public static let done = ResultCode(rawValue: SQLITE_DONE)
}
