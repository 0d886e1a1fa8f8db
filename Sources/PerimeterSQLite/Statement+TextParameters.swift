internal import CSQLite

/// The text (and BLOB) parameters of one row of a statement, their bytes gathered in one buffer that
/// ``Statement/execute(binding:)`` binds without a copy.
///
/// Binding a `String` makes SQLite copy it (an allocation, a copy and a free per value, ≈ 770
/// instructions, besides making the `String` when the value is not one already); a row of the event
/// log has up to ten. Here the caller appends each text's bytes to one buffer, and the statement
/// points SQLite at them for its one step. Reuse one value for many rows (``removeAll()`` between
/// them) so that the buffer is allocated once.
public struct TextParameters {
    /// The bytes of the texts, one after another.
    private var bytes: [UInt8] = []
    /// Per parameter: its index, the range of its bytes in ``bytes`` (`nil` binds NULL), and whether
    /// they are bound as a BLOB rather than text.
    private var fields: [Field] = []

    /// One parameter (see ``fields``).
    fileprivate struct Field {
        var index: Int32
        var range: Range<Int>?
        var isBlob = false
    }

    /// No parameters.
    public init() {}

    /// Forgets every parameter, keeping the storage for the next row.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        fields.removeAll(keepingCapacity: true)
    }

    /// Binds `text` at `index` (NULL for `nil`).
    public mutating func append(_ text: String?, at index: Int32) {
        guard let text else {
            fields.append(Field(index: index, range: nil))
            return
        }
        append(at: index) { $0.append(contentsOf: text.utf8) }
    }

    /// Binds at `index` the bytes that `write` appends to the buffer it is given (which may already
    /// hold other parameters' bytes: `write` must only append). They must be valid UTF-8: SQLite does
    /// not check.
    public mutating func append(at index: Int32, _ write: (inout [UInt8]) throws -> Void) rethrows {
        try append(at: index, isBlob: false, write)
    }

    /// Binds at `index`, as a BLOB, the bytes that `write` appends to the buffer it is given (which may
    /// already hold other parameters' bytes: `write` must only append).
    public mutating func appendBlob(at index: Int32, _ write: (inout [UInt8]) throws -> Void) rethrows {
        try append(at: index, isBlob: true, write)
    }

    /// The bytes that `write` appends, bound at `index` as a BLOB or as text.
    @inline(__always)
    private mutating func append(at index: Int32, isBlob: Bool, _ write: (inout [UInt8]) throws -> Void) rethrows {
        let start = bytes.count
        try write(&bytes)
        fields.append(Field(index: index, range: start..<bytes.count, isBlob: isBlob))
    }

    /// Calls `body` with the bytes' address (not null, even with no bytes) and the parameters; the
    /// address is valid inside `body` only.
    fileprivate func withBytes<Result>(_ body: (UnsafePointer<CChar>, [Field]) -> Result) -> Result {
        bytes.withUnsafeBytes { raw in
            // SQLite binds NULL for a null pointer, also with a length of 0; a text or BLOB of no
            // bytes needs an address that is not null (it is never read).
            let base = (raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self)
            return body(base, fields)
        }
    }
}

extension Statement {
    /// Binds `texts` (and BLOBs) at their indices without a copy, runs the statement to completion, resets it and
    /// binds NULL at those indices again, so that no pointer to the bytes stays bound after this call.
    /// Bind the statement's other parameters as usual, before.
    public func execute(binding texts: TextParameters) throws(DatabaseError) {
        let code = texts.withBytes { base, fields -> Int32 in
            bind(fields, at: base)
            return stepThenUnbind(fields.lazy.filter { $0.range != nil }.map(\.index))
        }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, sql: sql) }
    }
}

extension Statement {
    /// As ``execute(binding:)``, but the texts stay bound after the step (and the reset): for a
    /// caller that runs the statement many times and binds every one of its parameters before each
    /// run. Unbinding costs ≈ 40 instructions a text, ten texts a row of the event log.
    ///
    /// The bound addresses point into `texts` and are not valid after this call: the caller must
    /// bind every parameter again before the statement runs again, and must call ``reset()`` (which
    /// unbinds them all) before it lets the statement go — to a later commit or anyone else.
    public func executeLeavingBound(_ texts: TextParameters) throws(DatabaseError) {
        let code = texts.withBytes { base, fields -> Int32 in
            bind(fields, at: base)
            let code = sqlite3_step(handle)
            sqlite3_reset(handle)
            return code
        }
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw database.error(code, sql: sql) }
    }
}

extension Statement {
    /// Binds each of `fields` to its bytes at `base`, without a copy.
    fileprivate func bind(_ fields: [TextParameters.Field], at base: UnsafePointer<CChar>) {
        for field in fields {
            if let range = field.range {
                if field.isBlob {
                    sqlite3_bind_blob(handle, field.index, base + range.lowerBound, Int32(range.count), nil)
                } else {
                    sqlite3_bind_text(handle, field.index, base + range.lowerBound, Int32(range.count), nil)
                }
            } else {
                sqlite3_bind_null(handle, field.index)
            }
        }
    }
}
