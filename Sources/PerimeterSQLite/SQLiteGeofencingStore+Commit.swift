import Foundation
import PerimeterEngine
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
            do {
                if bulk {
                    try inBulkTransaction(&connection) { connection in try Self.write(changes, into: &connection) }
                } else {
                    try connection.db.inTransaction { try Self.write(changes, into: &connection) }
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
                let presence = try db.statement("DELETE FROM presence WHERE fence = ?")
                presence.bind(id.rawValue, at: 1)
                try presence.execute()
            case .removeAll:
                try db.execute("DELETE FROM fence; DELETE FROM presence;")
            }
        }

        for device in changes.forgottenDevices {
            guard let key = try connection.key(of: device) else { continue }
            for statement in [try db.statement(literal: "DELETE FROM device WHERE key = ?"),
                              try db.statement(literal: "DELETE FROM presence WHERE device = ?"),
                              try db.statement(literal: "DELETE FROM device_option WHERE device = ?")] {
                statement.bind(key, at: 1)
                try statement.execute()
            }
            connection.deviceKeys[device] = nil
        }

        if !changes.devices.isEmpty {
            let update = try db.statement(literal: """
                UPDATE device SET last_time = ?2, latitude = ?3, longitude = ?4, update_count = ?5, instant_visits = ?6
                WHERE key = ?1
                """)
            for change in changes.devices {
                let snapshot = change.snapshot
                // A known device (the usual case) is one update by its integer key; a new one is inserted
                // with the next key (the rowid SQLite gives: the largest plus one, so keys keep the order
                // of first appearance) and remembered. Both statements number their parameters alike:
                // ?1 key (NULL for a new device) or ?7 id, ?2 time, ?3 latitude, ?4 longitude, ?5 count,
                // ?6 instant visits (NULL for none, the usual case).
                func executeDevice(_ statement: Statement, key: Int64?) throws {
                    statement.bind(key, at: 1)
                    statement.bind(snapshot.lastTime, at: 2)
                    statement.bind(snapshot.lastCoordinate.latitude, at: 3)
                    statement.bind(snapshot.lastCoordinate.longitude, at: 4)
                    statement.bind(Int64(bitPattern: snapshot.updateCount), at: 5)
                    if key == nil { statement.bind(snapshot.device.rawValue, at: 7) }
                    if snapshot.instantVisits.isEmpty {
                        statement.bind(nil as Int64?, at: 6)
                        try statement.execute()
                    } else {
                        try statement.execute(binding: InstantVisitCodec.encode(snapshot.instantVisits), at: 6)
                    }
                }
                var known = try connection.key(of: snapshot.device)
                if let key = known {
                    try executeDevice(update, key: key)
                    if db.changes == 0 {
                        // Remembered wrongly (never expected): ask the file from now on.
                        connection.forget()
                        known = try connection.key(of: snapshot.device)
                        if let key = known { try executeDevice(update, key: key) }
                    }
                }
                let key: Int64
                if let known {
                    key = known
                } else {
                    let insert = try db.statement(literal: """
                        INSERT INTO device (key, id, last_time, latitude, longitude, update_count, instant_visits)
                        VALUES (?1, ?7, ?2, ?3, ?4, ?5, ?6)
                        """)
                    try executeDevice(insert, key: nil)
                    key = db.lastInsertRowID
                    connection.deviceKeys[snapshot.device] = key
                }

                // Devices without option state only need a delete when some device has a row (rare).
                if snapshot.options != nil || snapshot.stream != nil {
                    let upsert = try db.statement(literal: """
                        INSERT INTO device_option (device, state) VALUES (?, ?)
                        ON CONFLICT (device) DO UPDATE SET state = excluded.state
                        """)
                    upsert.bind(key, at: 1)
                    try upsert.execute(binding: OptionStateCodec.encode(options: snapshot.options, stream: snapshot.stream), at: 2)
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
                guard change.presenceChanged else { continue }
                try writePresence(of: snapshot, key: key, stored: change.storedMemberships, into: db)
            }
        }

        if let first = changes.events.first {
            let last = try connection.lastEventSequence ?? db.integer("SELECT coalesce(max(sequence), 0) FROM event") ?? 0
            guard first.sequence == last + 1 else {
                throw GeofencingError(.storageFailure, "event sequence \(first.sequence) does not continue the stored log, which ends at \(last); is another service writing to this store?")
            }
            let writer = JSONWriter()
            // Each row's texts go into one reused buffer, bound without a copy; the ids are written
            // from their bits (the same 32 digits `event.id` makes, without making the String).
            var texts = TextParameters()
            var expected = first.sequence
            var next = changes.events.startIndex
            while next < changes.events.endIndex {
                // Eight rows per statement where there are eight (see `eventInsert8`), else one.
                let rows = changes.events.endIndex - next >= 8 ? 8 : 1
                let insert = rows == 8 ? try db.statement(literal: Self.eventInsert8) : try db.statement(literal: Self.eventInsert1)
                texts.removeAll()
                for row in 0..<rows {
                    let logged = changes.events[next + row]
                    guard logged.sequence == expected else {
                        throw GeofencingError(.storageFailure, "event sequence \(logged.sequence) leaves a gap after \(expected - 1)")
                    }
                    expected += 1
                    bind(logged, to: insert, texts: &texts, from: Int32(16 * row), writer: writer)
                }
                try insert.execute(binding: texts)
                next += rows
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

    /// The event log's insert of one row; parameters 1–16 are the columns in this order.
    private static let eventInsert1: StaticString = """
        INSERT OR FAIL INTO event (sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside,
            observed_at, reason, fence_name, grp, properties, message)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// The event log's insert of eight rows, row *r* (from 0) in parameters 16·*r* + 1 … 16·*r* + 16.
    ///
    /// SQLite sets up and tears down a statement for every step (its cursor, its registers' memory):
    /// per row of the one-row insert ≈ 6,500 instructions, ≈ 4,800 with eight rows per step. `OR FAIL`:
    /// a statement of several rows that may fail half-way otherwise opens a statement journal to undo
    /// its own rows (≈ 300 instructions a row); a failure rolls the whole commit back anyway.
    private static let eventInsert8: StaticString = """
        INSERT OR FAIL INTO event (sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside,
            observed_at, reason, fence_name, grp, properties, message)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
            (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
            (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
            (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Binds `logged`'s columns to parameters `base` + 1 … `base` + 16 of an event insert: the numbers
    /// directly, the texts appended to `texts` (bound when the statement runs).
    private static func bind(_ logged: GeofencingEvent, to insert: Statement, texts: inout TextParameters, from base: Int32,
                             writer: JSONWriter) {
        let event = logged.event
        insert.bind(logged.sequence, at: base + 1)
        insert.bind(event.time.timeIntervalSinceReferenceDate, at: base + 7)
        insert.bind(event.coordinate.latitude, at: base + 8)
        insert.bind(event.coordinate.longitude, at: base + 9)
        insert.bind(event.timeInside, at: base + 10)
        insert.bind(event.observedAt.timeIntervalSinceReferenceDate, at: base + 11)
        texts.append(at: base + 2) { event.appendIDUTF8(to: &$0) }
        texts.append(at: base + 3) { event.appendVisitIDUTF8(to: &$0) }
        texts.append(event.kind.rawValue, at: base + 4)
        texts.append(event.fence.rawValue, at: base + 5)
        texts.append(event.device.rawValue, at: base + 6)
        texts.append(event.reason.rawValue, at: base + 12)
        texts.append(logged.fenceName, at: base + 13)
        texts.append(logged.group, at: base + 14)
        if logged.properties.isEmpty {
            texts.append(nil, at: base + 15)
        } else {
            texts.append(at: base + 15) { writer.write(.object(logged.properties), into: &$0) }
        }
        texts.append(logged.message, at: base + 16)
    }

    /// Makes the presence rows of `snapshot`'s device its memberships. When the rows held now are known
    /// (`stored`), only the memberships that differ are written — one row per entry, exit or dwell,
    /// instead of all of the device's rows; otherwise the rows are deleted and written again.
    private static func writePresence(of snapshot: DetectionEngine.DeviceSnapshot, key device: Int64,
                                      stored: [DetectionEngine.MembershipSnapshot]?, into db: Database) throws {
        let memberships = snapshot.memberships
        if let stored {
            for old in stored where !memberships.contains(where: { $0.fence == old.fence }) {
                let delete = try db.statement(literal: "DELETE FROM presence WHERE device = ? AND fence = ?")
                delete.bind(device, at: 1)
                delete.bind(old.fence.rawValue, at: 2)
                try delete.execute()
            }
        } else {
            let clear = try db.statement(literal: "DELETE FROM presence WHERE device = ?")
            clear.bind(device, at: 1)
            try clear.execute()
        }
        // An upsert: with `stored` known, a changed membership (a dwell fell due) has its row already.
        let write = try db.statement(literal: """
            INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled, ordinal) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (device, fence) DO UPDATE SET entry_time = excluded.entry_time,
                visit_sequence = excluded.visit_sequence, has_dwelled = excluded.has_dwelled, ordinal = excluded.ordinal
            """)
        for m in memberships where !(stored?.contains(m) ?? false) {
            write.bind(device, at: 1)
            write.bind(m.fence.rawValue, at: 2)
            write.bind(m.entryTime, at: 3)
            write.bind(Int64(bitPattern: m.visitSequence), at: 4)
            write.bind(Int64(m.hasDwelled ? 1 : 0), at: 5)
            write.bind(m.ordinal.map(Int64.init), at: 6)
            try write.execute()
        }
    }

    private static func writeMeta(_ key: String, _ value: Int64, into db: Database) throws {
        let meta = try db.statement(literal: "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        meta.bind(key, at: 1)
        meta.bind(value, at: 2)
        try meta.execute()
    }
}
