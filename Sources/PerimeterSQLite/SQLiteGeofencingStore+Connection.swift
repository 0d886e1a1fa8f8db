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

        /// Forgets every remembered value.
        mutating func forget() {
            lastEventSequence = nil
            optionRows = nil
        }
    }
}
