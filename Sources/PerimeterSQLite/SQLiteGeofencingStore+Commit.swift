import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService

extension SQLiteGeofencingStore {
    /// Writes `changes` in one transaction; on any error it is rolled back and nothing is changed.
    ///
    /// A commit with ``bulkCommitBytes`` of fence text or more (an import) is a bulk commit
    /// (`inBulkTransaction`): the same guarantees, written for megabytes of new rows.
    /// - Complexity: O(rows written · log n); statements are prepared once and cached.
    public func commit(_ changes: StoreChanges) throws {
        guard !changes.isEmpty else { return }
        let bulk = Self.fenceTextBytes(changes) >= Self.bulkCommitBytes
        try owner.withConnection("committing to") { connection throws in
            // A bulk commit that could not switch back: try again (its commits stay synced meanwhile).
            if connection.outsideWriteAheadLog { try? restoreWriteAheadLog(&connection) }
            func attempt(_ connection: inout Connection) throws {
                if bulk {
                    try inBulkTransaction(&connection) { connection in try Self.write(changes, into: &connection) }
                } else {
                    try connection.db.inTransaction { try Self.write(changes, into: &connection) }
                }
            }
            do {
                do {
                    try attempt(&connection)
                } catch is StaleDeviceKeys {
                    // Rolled back; once more with every key read from the file in the transaction.
                    connection.forget()
                    do {
                        try attempt(&connection)
                    } catch is StaleDeviceKeys {
                        throw GeofencingError(.storageFailure, "a device row changed under the commit that had just read its key; is another program writing to \(path)?")
                    }
                }
            } catch {
                connection.forget()
                throw error
            }
        }
    }

    private static func write(_ changes: StoreChanges, into connection: inout Connection) throws {
        let db = connection.db
        try connection.validate()
        // The removed fences' ids as their bytes (SQLite compares texts byte for byte, as the version-9
        // `DELETE … WHERE fence = ?` did); their memberships are taken out after the fence changes.
        var removedFences = Set<[UInt8]>()
        for change in changes.fences {
            switch change {
            case .upsert(let fence):
                let s = try db.statement(literal: """
                    INSERT INTO fence (id, position, feature, grp, name, dwell_time, expires_at, added_sequence)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET feature = excluded.feature, grp = excluded.grp,
                        name = excluded.name, dwell_time = excluded.dwell_time, expires_at = excluded.expires_at,
                        added_sequence = excluded.added_sequence
                    """)
                s.bind(fence.id.rawValue, at: 1)
                s.bind(fence.position, at: 2)
                s.bind(fence.group, at: 4)
                s.bind(fence.name, at: 5)
                s.bind(fence.dwellTime, at: 6)
                s.bind(fence.expiresAt, at: 7)
                s.bind(fence.additionSequence, at: 8)
                // Kilobytes (an import: tens of megabytes in all): bound where it is, not copied first.
                try fence.withFeatureUTF8 { (text) throws(DatabaseError) in try s.execute(bindingText: text, at: 3) }
            case .remove(let id):
                let fence = try db.statement("DELETE FROM fence WHERE id = ?")
                fence.bind(id.rawValue, at: 1)
                try fence.execute()
                removedFences.insert(Array(id.rawValue.utf8))
            case .removeAll:
                try db.execute("DELETE FROM fence; DELETE FROM presence;")
                removedFences.removeAll()
            }
        }
        if !removedFences.isEmpty { try removeMemberships(in: removedFences, from: db) }

        for device in changes.forgottenDevices {
            guard let key = try connection.key(of: device) else { continue }
            for statement in [try db.statement(literal: "DELETE FROM device WHERE key = ?"),
                              try db.statement(literal: "DELETE FROM presence WHERE device = ?"),
                              try db.statement(literal: "DELETE FROM device_option WHERE device = ?")] {
                statement.bind(key, at: 1)
                try statement.execute()
            }
            connection.deviceKeys[device] = nil
            connection.keysByNumber = []
            connection.instantVisitKeys?.remove(key)
        }

        if !changes.devices.isEmpty {
            // Known devices (the usual case) are written after this loop, in key order, their state in
            // place (`writeKnownDevices`); new ones are inserted first, up to 32 to a statement, each
            // with the next key (`insertNewDevices`), and remembered.
            var known: [(key: Int64, change: Int)] = []
            known.reserveCapacity(changes.devices.count)
            var keys = [Int64](repeating: 0, count: changes.devices.count)
            var new: [Int] = []
            for index in changes.devices.indices {
                if let remembered = try connection.key(of: changes.devices[index].snapshot.device, number: changes.devices[index].deviceNumber) {
                    keys[index] = remembered
                    known.append((remembered, index))
                } else {
                    new.append(index)
                }
            }
            if !new.isEmpty {
                try insertNewDevices(new, of: changes.devices, keys: &keys, known: &known, into: &connection)
            }
            // The devices whose presence rows to write, after this loop: (key, index in `changes.devices`).
            var presence: [(key: Int64, change: Int)] = []
            // By index, each field read where it lies: a `DeviceChange` taken out of the array is a copy
            // of the snapshot's references, retained and released (≈ 400 instructions a device).
            for index in changes.devices.indices {
                let key = keys[index]
                // Devices without option state only need a delete when some device has a row (rare).
                if changes.devices[index].snapshot.options != nil || changes.devices[index].snapshot.stream != nil {
                    let upsert = try db.statement(literal: """
                        INSERT INTO device_option (device, state) VALUES (?, ?)
                        ON CONFLICT (device) DO UPDATE SET state = excluded.state
                        """)
                    upsert.bind(key, at: 1)
                    try upsert.execute(binding: OptionStateCodec.encode(options: changes.devices[index].snapshot.options,
                                                                        stream: changes.devices[index].snapshot.stream), at: 2)
                    connection.optionRows = true
                } else {
                    if connection.optionRows == nil {
                        connection.optionRows = try db.integer("SELECT EXISTS (SELECT 1 FROM device_option)") != 0
                    }
                    if connection.optionRows == true {
                        let delete = try db.statement(literal: "DELETE FROM device_option WHERE device = ?")
                        delete.bind(key, at: 1)
                        try delete.execute()
                    }
                }
                if changes.devices[index].presenceChanged { presence.append((key, index)) }
            }
            try writeKnownDevices(known, of: changes.devices, into: &connection)
            try writePresence(presence, of: changes.devices, into: db)
        }

        if let first = changes.events.first {
            let last = try connection.lastEventSequence ?? db.integer("SELECT coalesce(max(sequence), 0) FROM event") ?? 0
            guard first.sequence == last + 1 else {
                throw GeofencingError(.storageFailure, "event sequence \(first.sequence) does not continue the stored log, which ends at \(last); is another service writing to this store?")
            }
            let writer = JSONWriter()
            // Each row's texts go into one reused buffer, bound without a copy; the engine's ids are
            // written as their 16 bytes, without making the String (`EventRowCodec`).
            var expected = first.sequence
            let events = changes.events.startIndex
            try forEachRowGroup(of: changes.events.count, Self.eventInsert, in: db) { insert, group, texts in
                for row in 0..<group.count {
                    let logged = changes.events[events + group.lowerBound + row]
                    guard logged.sequence == expected else {
                        throw GeofencingError(.storageFailure, "event sequence \(logged.sequence) leaves a gap after \(expected - 1)")
                    }
                    expected += 1
                    bind(logged, to: insert, texts: &texts, from: Int32(15 * row), writer: writer)
                }
                try insert.executeLeavingBound(texts)
                // The rows took the largest sequence plus one each: the group's last must be its event's.
                guard db.lastInsertRowID == expected - 1 else {
                    throw GeofencingError(.storageFailure, "event sequence \(expected - 1) was stored as \(db.lastInsertRowID); is another service writing to this store?")
                }
            }
            connection.lastEventSequence = expected - 1
        }

        if let consent = changes.serviceConsent {
            try writeMeta("service_consent", Int64(consent ? 1 : 0), into: db)
        }
        let processed = changes.processedUpdates.map { Int64(bitPattern: $0) }
        let arrivals = changes.arrivals.map { Int64(bitPattern: $0) }
        if let processed, let accepted = changes.acceptedSequence, let arrivals {
            // The usual case (every accepted update changes all three): one statement instead of three.
            let counters = try db.statement(literal: """
                INSERT INTO meta (key, value) VALUES ('processed_updates', ?1), ('accepted_sequence', ?2), ('arrivals', ?3)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """)
            counters.bind(processed, at: 1)
            counters.bind(accepted, at: 2)
            counters.bind(arrivals, at: 3)
            try counters.execute()
        } else {
            for case let (key, value?) in [("processed_updates", processed), ("accepted_sequence", changes.acceptedSequence),
                                           ("arrivals", arrivals)] {
                try writeMeta(key, value, into: db)
            }
        }
        if !changes.deviceConsents.isEmpty {
            let consent = try db.statement(literal: "INSERT INTO consent (device, granted) VALUES (?, ?) ON CONFLICT (device) DO UPDATE SET granted = excluded.granted")
            for (device, granted) in changes.deviceConsents.sorted(by: { $0.key < $1.key }) {
                consent.bind(device.rawValue, at: 1)
                consent.bind(Int64(granted ? 1 : 0), at: 2)
                try consent.execute()
            }
        }
    }

    /// Inserts the devices at `new` (indices into `devices`, in order; devices without a row), up to
    /// 32 rows to a statement, sets their keys in `keys` and remembers them. A device listed twice
    /// (not expected) is inserted once; its other changes are listed in `known` with that key.
    ///
    /// Each row takes the next key: SQLite gives a NULL integer key the largest plus one, so the rows
    /// of a statement get consecutive keys in row order, and keys keep the order of first appearance.
    /// That is checked: the largest key is read first, and after each statement the last row's key
    /// must be it plus the rows inserted so far. One insert a device cost ≈ 8,000 instructions (a
    /// statement's set-up at every step).
    private static func insertNewDevices(_ new: [Int], of devices: [DeviceChange], keys: inout [Int64],
                                         known: inout [(key: Int64, change: Int)], into connection: inout Connection) throws {
        let db = connection.db
        var first: [DeviceID: Int] = [:]
        var rows: [Int] = []
        var repeated: [Int] = []
        rows.reserveCapacity(new.count)
        for index in new {
            let device = devices[index].snapshot.device
            if first[device] == nil {
                first[device] = index
                rows.append(index)
            } else {
                repeated.append(index)
            }
        }
        var last = try db.integer(literal: "SELECT coalesce(max(key), 0) FROM device") ?? 0
        try forEachRowGroup(of: rows.count, deviceInsert, in: db) { insert, group, texts in
            for row in 0..<group.count {
                let index = rows[group.lowerBound + row]
                let base = Int32(3 * row)
                texts.append(at: base + 1) { $0.append(contentsOf: devices[index].snapshot.device.rawValue.utf8) }
                texts.appendBlob(at: base + 2) { $0.append(contentsOf: DeviceStateCodec.encode(devices[index].snapshot)) }
                // NULL for none, the usual case.
                if devices[index].snapshot.instantVisits.isEmpty {
                    texts.append(nil, at: base + 3)
                } else {
                    texts.appendBlob(at: base + 3) { $0.append(contentsOf: InstantVisitCodec.encode(devices[index].snapshot.instantVisits)) }
                }
            }
            try insert.executeLeavingBound(texts)
            guard db.lastInsertRowID == last + Int64(group.count) else {
                throw GeofencingError(.storageFailure, "new device rows were given keys up to \(db.lastInsertRowID), not \(last + 1)…\(last + Int64(group.count)); is another program writing to \(db.path)?")
            }
            for row in 0..<group.count {
                let index = rows[group.lowerBound + row]
                let key = last + 1 + Int64(row)
                keys[index] = key
                connection.deviceKeys[devices[index].snapshot.device] = key
                connection.remember(key, of: devices[index].snapshot.device, number: devices[index].deviceNumber)
                if !devices[index].snapshot.instantVisits.isEmpty { connection.instantVisitKeys?.insert(key) }
            }
            last += Int64(group.count)
        }
        for index in repeated {
            let key = keys[first[devices[index].snapshot.device]!]
            keys[index] = key
            known.append((key, index))
        }
    }

    /// New device rows: row *r* (from 0) in parameters 3·*r* + 1 id, + 2 state, + 3 instant visits; the
    /// key NULL (the next one).
    private static let deviceInsert = RowGroupSQL(
        head: "INSERT OR FAIL INTO device (key, id, state, instant_visits) VALUES",
        row: "(NULL, ?, ?, ?)",
        tail: "")

    /// Writes the state of devices that have a row, `known` giving each one's key and its place in
    /// `changes`, in key order (neighbouring rows share pages): each row's `state` BLOB overwritten in
    /// place (``DeviceStateWriter``), then the instant visits of the devices that have some now or had
    /// some stored (rare; NULL otherwise, and then not written).
    ///
    /// A row whose key is free, or whose id check is another device's, means the key was remembered
    /// wrongly (never expected; see ``Connection``): the commit throws ``StaleDeviceKeys`` (it then
    /// forgets what it remembers and starts again, reading keys from the file).
    private static func writeKnownDevices(_ known: [(key: Int64, change: Int)], of devices: [DeviceChange],
                                          into connection: inout Connection) throws {
        guard !known.isEmpty else { return }
        var known = known
        if zip(known, known.dropFirst()).contains(where: { $0.key > $1.key }) {
            // Sorted as single integers (key above, position below) where they fit: a third of the cost
            // of sorting the pairs by a closure.
            if known.count < 1 << 24, known.allSatisfy({ $0.key >= 0 && $0.key < 1 << 39 }) {
                var packed = known.map { UInt64($0.key) << 24 | UInt64($0.change) }
                packed.sort()
                known = packed.map { (Int64($0 >> 24), Int($0 & 0xFF_FFFF)) }
            } else {
                known.sort { $0.key < $1.key }
            }
        }
        let db = connection.db
        var writer = DeviceStateWriter(db)
        defer { writer.close() }
        for (key, change) in known {
            guard try writer.write(devices, change, key: key) == .written else { throw StaleDeviceKeys() }
        }
        // The handle is closed before the instant visits' updates change the same rows.
        writer.close()
        if connection.instantVisitKeys == nil {
            var keys = Set<Int64>()
            let stored = try db.statement(literal: "SELECT key FROM device WHERE instant_visits IS NOT NULL")
            defer { stored.reset() }
            while try stored.step() { keys.insert(stored.int64(0)) }
            connection.instantVisitKeys = keys
        }
        for (key, change) in known {
            let visits = devices[change].snapshot.instantVisits
            guard !visits.isEmpty || connection.instantVisitKeys!.contains(key) else { continue }
            let update = try db.statement(literal: "UPDATE device SET instant_visits = ? WHERE key = ?")
            update.bind(visits.isEmpty ? nil : InstantVisitCodec.encode(visits), at: 1)
            update.bind(key, at: 2)
            try update.execute()
            if visits.isEmpty {
                connection.instantVisitKeys!.remove(key)
            } else {
                connection.instantVisitKeys!.insert(key)
            }
        }
    }

    /// A remembered device key named a row of another device or no row (``writeKnownDevices(_:of:into:)``).
    struct StaleDeviceKeys: Error {}

    /// The event log's insert: row *r* (from 0) in parameters 15·*r* + 1 … 15·*r* + 15, the columns in
    /// this order. The sequence is not bound: SQLite gives each row the largest plus one (`sequence` is
    /// the rowid), which the commit has checked to be the first event's and checks after each
    /// statement; an explicit rowid costs a look-up for an existing row (≈ 700 instructions a row in C).
    ///
    /// SQLite sets up and tears down a statement for every step (its cursor, its registers' memory):
    /// per row of the one-row insert ≈ 6,500 instructions, ≈ 4,800 with eight rows per step, ≈ 4,600
    /// with 32. `OR FAIL`: a statement of several rows that may fail half-way otherwise opens a
    /// statement journal to undo its own rows (≈ 300 instructions a row); a failure rolls the whole
    /// commit back anyway.
    private static let eventInsert = RowGroupSQL(
        head: """
            INSERT OR FAIL INTO event (id, visit_id, kind, fence, device, time, latitude, longitude, time_inside,
                observed_at, reason, fence_name, grp, properties, message) VALUES
            """,
        row: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        tail: "")

    /// Binds `logged`'s columns but its sequence to parameters `base` + 1 … `base` + 15 of an event insert: the numbers
    /// (kind and reason as their codes) directly, the texts and id BLOBs appended to `texts` (bound when
    /// the statement runs).
    private static func bind(_ logged: GeofencingEvent, to insert: Statement, texts: inout TextParameters, from base: Int32,
                             writer: JSONWriter) {
        let event = logged.event
        insert.bind(event.time.timeIntervalSinceReferenceDate, at: base + 6)
        insert.bind(event.coordinate.latitude, at: base + 7)
        insert.bind(event.coordinate.longitude, at: base + 8)
        insert.bind(event.timeInside, at: base + 9)
        insert.bind(event.observedAt.timeIntervalSinceReferenceDate, at: base + 10)
        insert.bind(EventRowCodec.code(of: event.kind), at: base + 3)
        insert.bind(EventRowCodec.code(of: event.reason), at: base + 11)
        // The engine's ids as their 16 bytes; any other id as its text (`EventRowCodec`).
        if let bits = event.idBits {
            texts.appendBlob(at: base + 1) { EventRowCodec.append(bits, to: &$0) }
        } else {
            texts.append(at: base + 1) { event.appendIDUTF8(to: &$0) }
        }
        if let bits = event.visitIDBits {
            texts.appendBlob(at: base + 2) { EventRowCodec.append(bits, to: &$0) }
        } else {
            texts.append(at: base + 2) { event.appendVisitIDUTF8(to: &$0) }
        }
        texts.append(event.fence.rawValue, at: base + 4)
        texts.append(event.device.rawValue, at: base + 5)
        texts.append(logged.fenceName, at: base + 12)
        texts.append(logged.group, at: base + 13)
        if logged.properties.isEmpty {
            texts.append(nil, at: base + 14)
        } else {
            texts.append(at: base + 14) { writer.write(.object(logged.properties), into: &$0) }
        }
        texts.append(logged.message, at: base + 15)
    }

    /// Writes the presence row of each device in `presence` (its key, and where its change is in
    /// `devices`): all its memberships as one BLOB (``PresenceCodec``), up to 32 rows per statement (as
    /// ``eventInsert``); a device now inside no fence loses its row instead (up to 32 per statement).
    /// A device listed twice (not expected) ends with its last change's presence.
    ///
    /// Version 9 wrote a row per membership that differed from the stored ones (an entry, a dwell) and
    /// deleted one per exit; here a device costs one row whatever changed.
    private static func writePresence(_ presence: [(key: Int64, change: Int)], of devices: [DeviceChange],
                                      into db: Database) throws {
        guard !presence.isEmpty else { return }
        var presence = presence
        // The deletes run before the writes: a key listed twice keeps only its last change.
        if presence.count > 1, Set(presence.lazy.map(\.key)).count < presence.count {
            var seen = Set<Int64>()
            presence = presence.reversed().filter { seen.insert($0.key).inserted }.reversed()
        }
        let empty = presence.filter { devices[$0.change].snapshot.memberships.isEmpty }
        try deletePresence(of: empty.map(\.key), from: db)
        let written = empty.isEmpty ? presence : presence.filter { !devices[$0.change].snapshot.memberships.isEmpty }
        try forEachRowGroup(of: written.count, presenceReplace, in: db) { replace, group, texts in
            for row in 0..<group.count {
                let (key, change) = written[group.lowerBound + row]
                let base = Int32(2 * row)
                replace.bind(key, at: base + 1)
                texts.appendBlob(at: base + 2) { PresenceCodec.append(devices[change].snapshot.memberships, to: &$0) }
            }
            try replace.executeLeavingBound(texts)
        }
    }

    /// Deletes the presence rows of the devices `keys`, up to 32 per statement.
    private static func deletePresence(of keys: [Int64], from db: Database) throws {
        try forEachRowGroup(of: keys.count, presenceDelete, in: db) { delete, group, texts in
            for row in 0..<group.count { delete.bind(keys[group.lowerBound + row], at: Int32(row + 1)) }
            try delete.executeLeavingBound(texts)
        }
    }

    /// Takes the memberships of the fences whose ids (as UTF-8) are `fences` out of every presence row
    /// that has one: the rows are read, decoded and those that change are written again. O(presence
    /// rows); only a commit that removes fences runs it.
    ///
    /// - Throws: ``GeofencingError/Code/incompatibleStorage`` for a row that cannot be decoded, naming
    ///   its device (by key when it has no device row).
    private static func removeMemberships(in fences: Set<[UInt8]>, from db: Database) throws {
        var rewritten: [(key: Int64, memberships: [DetectionEngine.MembershipSnapshot])] = []
        var emptied: [Int64] = []
        let rows = try db.statement(literal: """
            SELECT p.device, d.id, p.memberships FROM presence p LEFT JOIN device d ON d.key = p.device
            """)
        do {
            defer { rows.reset() }
            while try rows.step() {
                let memberships: [DetectionEngine.MembershipSnapshot]
                do {
                    memberships = try PresenceCodec.decode(rows.blob(2))
                } catch {
                    let device = rows.isNull(1) ? "key \(rows.int64(0))" : rows.string(1)
                    throw GeofencingError(.incompatibleStorage, "the stored presence of device \(device) cannot be read (\(error)); the database is damaged")
                }
                let kept = memberships.filter { !fences.contains(Array($0.fence.rawValue.utf8)) }
                if kept.isEmpty {
                    emptied.append(rows.int64(0))
                } else if kept.count != memberships.count {
                    rewritten.append((rows.int64(0), kept))
                }
            }
        }
        try deletePresence(of: emptied, from: db)
        try forEachRowGroup(of: rewritten.count, presenceReplace, in: db) { replace, group, texts in
            for row in 0..<group.count {
                let entry = rewritten[group.lowerBound + row]
                let base = Int32(2 * row)
                replace.bind(entry.key, at: base + 1)
                texts.appendBlob(at: base + 2) { PresenceCodec.append(entry.memberships, to: &$0) }
            }
            try replace.executeLeavingBound(texts)
        }
    }

    /// One statement's SQL for 1, 8 and 32 rows: `head`, the rows' `row` tuples separated by commas,
    /// then `tail`.
    struct RowGroupSQL {
        /// The statements for one, eight and 32 rows.
        let one: SQLText, eight: SQLText, thirtyTwo: SQLText

        init(head: String, row: String, tail: String) {
            func sql(_ rows: Int) -> SQLText {
                SQLText(head + " " + Array(repeating: row, count: rows).joined(separator: ", ") + " " + tail)
            }
            (one, eight, thirtyTwo) = (sql(1), sql(8), sql(32))
        }

        /// The rows of the next group when `rows` remain: 32, 8 or 1.
        static func size(forRemaining rows: Int) -> Int {
            rows >= 32 ? 32 : rows >= 8 ? 8 : 1
        }
    }

    /// Calls `body` with the rows `0..<count` in groups, as the commit's statements take them: 32 rows
    /// a statement while 32 remain, then eight while eight remain, then one (see ``eventInsert``).
    /// `body` gets the group's statement, the group, and one reused ``TextParameters``, emptied for
    /// each group; it binds every parameter of the rows and runs the statement with
    /// ``Statement/executeLeavingBound(_:)`` (the statements are unbound when this returns or throws).
    ///
    /// Each statement is found once: a look-up also clears the statement's bindings (≈ 1,900
    /// instructions for 56), and every row binds all its parameters anyway.
    @inline(__always)
    private static func forEachRowGroup(of count: Int, _ sql: RowGroupSQL, in db: Database,
                                        _ body: (Statement, Range<Int>, inout TextParameters) throws -> Void) throws {
        guard count > 0 else { return }
        var found: (one: Statement?, eight: Statement?, thirtyTwo: Statement?) = (nil, nil, nil)
        var texts = TextParameters()
        // `body` leaves each group's texts bound (`executeLeavingBound`): the next group binds every
        // parameter again, and the statements are unbound here, before `texts` goes away.
        defer {
            found.one?.reset()
            found.eight?.reset()
            found.thirtyTwo?.reset()
        }
        var next = 0
        while next < count {
            let rows = RowGroupSQL.size(forRemaining: count - next)
            let statement: Statement
            switch rows {
            case 32:
                if found.thirtyTwo == nil { found.thirtyTwo = try db.statement(sql.thirtyTwo) }
                statement = found.thirtyTwo!
            case 8:
                if found.eight == nil { found.eight = try db.statement(sql.eight) }
                statement = found.eight!
            default:
                if found.one == nil { found.one = try db.statement(sql.one) }
                statement = found.one!
            }
            texts.removeAll()
            try body(statement, next..<next + rows, &texts)
            next += rows
        }
    }

    /// Deletes of presence rows: parameter *r* + 1 (from 1) the key of row *r*.
    private static let presenceDelete = RowGroupSQL(head: "DELETE FROM presence WHERE device IN (", row: "?", tail: ")")

    /// Presence rows: row *r* (from 0) in parameters 2·*r* + 1 device key, + 2 memberships. `OR REPLACE`:
    /// a device's row, when it has one, is replaced whole (the table has no other index and no trigger).
    private static let presenceReplace = RowGroupSQL(
        head: "INSERT OR REPLACE INTO presence (device, memberships) VALUES",
        row: "(?, ?)",
        tail: "")

    private static func writeMeta(_ key: String, _ value: Int64, into db: Database) throws {
        let meta = try db.statement(literal: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        meta.bind(key, at: 1)
        meta.bind(value, at: 2)
        try meta.execute()
    }
}
