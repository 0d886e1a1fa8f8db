import Foundation
import PerimeterEngine
import PerimeterService

extension SQLiteGeofencingStore {
    /// Writes `changes` in one transaction; on any error it is rolled back and nothing is changed.
    ///
    /// - Complexity: O(rows written · log n); statements are prepared once and cached.
    public func commit(_ changes: StoreChanges) throws {
        guard !changes.isEmpty else { return }
        do {
            try connection.withLock { db throws in
                try db.inTransaction { try Self.write(changes, into: db) }
            }
        } catch let error as DatabaseError {
            throw Self.storeError(error, path: path, while: "committing to")
        }
    }

    private static func write(_ changes: StoreChanges, into db: Database) throws {
        for change in changes.fences {
            switch change {
            case .upsert(let fence):
                let s = try db.statement("""
                    INSERT INTO fence (id, position, feature, grp, name, dwell_time, expires_at, added_sequence)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET feature = excluded.feature, grp = excluded.grp,
                        name = excluded.name, dwell_time = excluded.dwell_time, expires_at = excluded.expires_at,
                        added_sequence = excluded.added_sequence
                    """)
                s.bind(fence.id.rawValue, at: 1)
                s.bind(fence.position, at: 2)
                s.bind(fence.feature, at: 3)
                s.bind(fence.group, at: 4)
                s.bind(fence.name, at: 5)
                s.bind(fence.dwellTime, at: 6)
                s.bind(fence.expiresAt, at: 7)
                s.bind(fence.additionSequence, at: 8)
                try s.execute()
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

        if !changes.devices.isEmpty {
            let device = try db.statement("""
                INSERT INTO device (id, last_time, latitude, longitude, update_count) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET last_time = excluded.last_time, latitude = excluded.latitude,
                    longitude = excluded.longitude, update_count = excluded.update_count
                """)
            // Devices without option state only need a delete when some device has a row (rare).
            var optionRows: Bool?
            for change in changes.devices {
                let snapshot = change.snapshot
                if snapshot.options != nil || snapshot.stream != nil {
                    let upsert = try db.statement("""
                        INSERT INTO device_option (device, state) VALUES (?, ?)
                        ON CONFLICT (device) DO UPDATE SET state = excluded.state
                        """)
                    upsert.bind(snapshot.device.rawValue, at: 1)
                    try upsert.execute(binding: OptionStateCodec.encode(options: snapshot.options, stream: snapshot.stream), at: 2)
                    optionRows = true
                } else {
                    if optionRows == nil { optionRows = try db.integer("SELECT EXISTS (SELECT 1 FROM device_option)") != 0 }
                    if optionRows == true {
                        let delete = try db.statement("DELETE FROM device_option WHERE device = ?")
                        delete.bind(snapshot.device.rawValue, at: 1)
                        try delete.execute()
                    }
                }
                device.bind(snapshot.device.rawValue, at: 1)
                device.bind(snapshot.lastTime, at: 2)
                device.bind(snapshot.lastCoordinate.latitude, at: 3)
                device.bind(snapshot.lastCoordinate.longitude, at: 4)
                device.bind(Int64(bitPattern: snapshot.updateCount), at: 5)
                try device.execute()
                guard change.presenceChanged else { continue }
                let clear = try db.statement("DELETE FROM presence WHERE device = ?")
                clear.bind(snapshot.device.rawValue, at: 1)
                try clear.execute()
                let insert = try db.statement("""
                    INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled) VALUES (?, ?, ?, ?, ?)
                    """)
                for m in snapshot.memberships {
                    insert.bind(snapshot.device.rawValue, at: 1)
                    insert.bind(m.fence.rawValue, at: 2)
                    insert.bind(m.entryTime, at: 3)
                    insert.bind(Int64(bitPattern: m.visitSequence), at: 4)
                    insert.bind(Int64(m.hasDwelled ? 1 : 0), at: 5)
                    try insert.execute()
                }
            }
        }

        if let first = changes.events.first {
            let last = try db.integer("SELECT coalesce(max(sequence), 0) FROM event") ?? 0
            guard first.sequence == last + 1 else {
                throw GeofencingError(.storageFailure, "event sequence \(first.sequence) does not continue the stored log, which ends at \(last); is another service writing to this store?")
            }
            let insert = try db.statement("""
                INSERT INTO event (sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside,
                    observed_at, reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
            var expected = first.sequence
            for logged in changes.events {
                guard logged.sequence == expected else {
                    throw GeofencingError(.storageFailure, "event sequence \(logged.sequence) leaves a gap after \(expected - 1)")
                }
                expected += 1
                let event = logged.event
                insert.bind(logged.sequence, at: 1)
                insert.bind(event.id, at: 2)
                insert.bind(event.visitID, at: 3)
                insert.bind(event.kind.rawValue, at: 4)
                insert.bind(event.fence.rawValue, at: 5)
                insert.bind(event.device.rawValue, at: 6)
                insert.bind(event.time.timeIntervalSinceReferenceDate, at: 7)
                insert.bind(event.coordinate.latitude, at: 8)
                insert.bind(event.coordinate.longitude, at: 9)
                insert.bind(event.timeInside, at: 10)
                insert.bind(event.observedAt.timeIntervalSinceReferenceDate, at: 11)
                insert.bind(event.reason.rawValue, at: 12)
                try insert.execute()
            }
        }

        let meta = try db.statement("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        if let consent = changes.serviceConsent {
            meta.bind("service_consent", at: 1)
            meta.bind(Int64(consent ? 1 : 0), at: 2)
            try meta.execute()
        }
        let counters: [(String, Int64?)] = [
            ("processed_updates", changes.processedUpdates.map { Int64(bitPattern: $0) }),
            ("accepted_sequence", changes.acceptedSequence),
            ("arrivals", changes.arrivals.map { Int64(bitPattern: $0) }),
        ]
        for case let (key, value?) in counters {
            meta.bind(key, at: 1)
            meta.bind(value, at: 2)
            try meta.execute()
        }
        if !changes.deviceConsents.isEmpty {
            let consent = try db.statement("INSERT INTO consent (device, granted) VALUES (?, ?) ON CONFLICT (device) DO UPDATE SET granted = excluded.granted")
            for (device, granted) in changes.deviceConsents.sorted(by: { $0.key < $1.key }) {
                consent.bind(device.rawValue, at: 1)
                consent.bind(Int64(granted ? 1 : 0), at: 2)
                try consent.execute()
            }
        }
    }
}
