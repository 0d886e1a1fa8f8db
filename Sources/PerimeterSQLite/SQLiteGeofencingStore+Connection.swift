extension SQLiteGeofencingStore {
    /// The store's connection and what the store remembers about the file between commits.
    ///
    /// Remembered values are only trusted in ``LockingMode/exclusive`` mode, where nobody else can
    /// write the file; in ``LockingMode/shared`` mode they are forgotten before every commit. Any failed
    /// commit forgets them too.
    struct Connection: DatabaseConnection {
        /// The SQLite connection.
        let db: Database
        /// Whether the remembered values below survive from one commit to the next.
        let remembers: Bool
        /// The sequence number of the last logged event, when known.
        var lastEventSequence: Int64?
        /// Whether `device_option` may have rows (`false`: known empty), when known.
        var optionRows: Bool?
        /// Whether a bulk commit left the connection under a rollback journal (with `synchronous =
        /// FULL`) because it could not return to write-ahead logging; not a remembered value: it
        /// describes this connection, not the file.
        var outsideWriteAheadLog = false

        /// Forgets every remembered value.
        mutating func forget() {
            lastEventSequence = nil
            optionRows = nil
        }
    }
}
