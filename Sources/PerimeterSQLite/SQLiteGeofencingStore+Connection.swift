import PerimeterEngine

extension SQLiteGeofencingStore {
    /// The store's connection and what the store remembers about the file between commits.
    ///
    /// In ``LockingMode/exclusive`` mode nobody else can write the file, so remembered values are
    /// trusted from one commit to the next. In ``LockingMode/shared`` mode another connection may write
    /// between two commits: each commit reads `PRAGMA data_version` inside its transaction (where nobody
    /// else can write any more) and forgets everything when it differs from the value seen at the last
    /// commit or load (``validate()``). Any failed commit forgets them too (its rolled-back inserts may
    /// have been remembered).
    struct Connection: DatabaseConnection {
        /// The SQLite connection.
        let db: Database
        /// Whether the remembered values below are trusted without asking the file (exclusive locking).
        let trustsMemory: Bool
        /// `PRAGMA data_version` when the values below were last known to be true of the file.
        var dataVersion: Int64?
        /// The sequence number of the last logged event, when known.
        var lastEventSequence: Int64?
        /// Whether `device_option` may have rows (`false`: known empty), when known.
        var optionRows: Bool?
        /// The integer key (`device.key`) of devices the store has read or written.
        var deviceKeys: [DeviceID: Int64] = [:]
        /// By the committing service's device number (``DeviceChange/deviceNumber``): the key and id last
        /// found or written for that number. Every entry agrees with ``deviceKeys`` (it is emptied
        /// whenever a key is forgotten), and is used only for a change of the same id: a comparison of
        /// ids instead of hashing one (≈ 390 instructions a device).
        var keysByNumber: [(key: Int64, device: DeviceID)?] = []
        /// The keys of the device rows whose `instant_visits` is not NULL, when known: only those rows,
        /// and the devices that have instant visits now, need that column written by a commit.
        var instantVisitKeys: Set<Int64>?
        /// Whether ``deviceKeys`` holds every device of the file (after a load, and as long as nothing
        /// is forgotten): a device it lacks then has no row, and is inserted without looking for one.
        var deviceKeysComplete = false
        /// Whether a bulk commit left the connection under a rollback journal (with `synchronous =
        /// FULL`) because it could not return to write-ahead logging; not a remembered value: it
        /// describes this connection, not the file.
        var outsideWriteAheadLog = false

        /// Forgets every remembered value.
        mutating func forget() {
            dataVersion = nil
            lastEventSequence = nil
            optionRows = nil
            deviceKeys = [:]
            keysByNumber = []
            instantVisitKeys = nil
            deviceKeysComplete = false
        }

        /// Inside a transaction: forgets the remembered values unless nobody else can have written the
        /// file since they were last true (exclusive locking, or the same `PRAGMA data_version`).
        mutating func validate() throws {
            guard !trustsMemory else { return }
            let version = try db.integer(literal: "PRAGMA data_version")
            if version != dataVersion { forget() }
            dataVersion = version
        }

        /// As ``key(of:)``, first trying what `number` (a ``DeviceChange/deviceNumber``; -1 for none)
        /// last named, and remembering the key for it.
        mutating func key(of device: DeviceID, number: Int32) throws -> Int64? {
            let n = Int(number)
            if n >= 0, n < keysByNumber.count, let entry = keysByNumber[n], entry.device == device { return entry.key }
            guard let key = try key(of: device) else { return nil }
            remember(key, of: device, number: number)
            return key
        }

        /// Remembers `key` for `device` under `number`. Numbers far beyond the devices remembered (a
        /// caller's own numbering, not a service's dense one) are not: the table would grow to them.
        mutating func remember(_ key: Int64, of device: DeviceID, number: Int32) {
            let n = Int(number)
            guard n >= 0, n <= 2 * deviceKeys.count + 1024 else { return }
            if n >= keysByNumber.count {
                keysByNumber.append(contentsOf: repeatElement(nil, count: n + 1 - keysByNumber.count))
            }
            keysByNumber[n] = (key, device)
        }

        /// The key of `device`'s row, or `nil` when it has none; from memory when remembered, else from
        /// the file (and then remembered).
        mutating func key(of device: DeviceID) throws -> Int64? {
            if let key = deviceKeys[device] { return key }
            if deviceKeysComplete { return nil }
            let find = try db.statement(literal: "SELECT key FROM device WHERE id = ?")
            find.bind(device.rawValue, at: 1)
            defer { find.reset() }
            guard try find.step() else { return nil }
            let key = find.int64(0)
            deviceKeys[device] = key
            return key
        }
    }
}
