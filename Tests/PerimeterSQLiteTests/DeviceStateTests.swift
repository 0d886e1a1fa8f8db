import Foundation
import PerimeterEngine
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

/// Schema version 8: a device's time, position and update count in one 40-byte `state` BLOB, written
/// in place by key (`DeviceStateWriter`) after checking the row's id check; migration 8 from files of
/// version 7.
@Suite("SQLite store: device state column")
struct DeviceStateTests {
    static func randomSnapshot(_ id: DeviceID, _ random: inout SplitMix64) -> DetectionEngine.DeviceSnapshot {
        let time = random.next() % 4 == 0 ? -Double(random.next() % 1_000_000) / 8 : 1_700_000_000 + Double(random.next() % 1_000_000) / 8
        return DetectionEngine.DeviceSnapshot(
            device: id, lastTime: time,
            lastCoordinate: Coordinate(latitude: Double(Int64(random.next() % 180_000_000) - 90_000_000) / 1e6,
                                       longitude: Double(Int64(random.next() % 360_000_000) - 180_000_000) / 1e6),
            updateCount: random.next() % 3 == 0 ? random.next() : random.next() % 1000, memberships: [])
    }

    @Test("the column's bytes: the id check, then time, latitude, longitude and count, little-endian; read back equal")
    func codec() throws {
        // FNV-1a of "a" (the published test vector): files written by one build are read by the next.
        #expect(DeviceStateCodec.idCheck("a") == 0xAF63_DC4C_8601_EC8C)
        #expect(DeviceStateCodec.idCheck("") == 0xCBF2_9CE4_8422_2325)
        let one = DeviceStateCodec.encode(DetectionEngine.DeviceSnapshot(
            device: "a", lastTime: 1, lastCoordinate: Coordinate(latitude: -2, longitude: 0.5), updateCount: 258, memberships: []))
        #expect(one == [0x8C, 0xEC, 0x01, 0x86, 0x4C, 0xDC, 0x63, 0xAF,
                        0, 0, 0, 0, 0, 0, 0xF0, 0x3F,  // 1.0
                        0, 0, 0, 0, 0, 0, 0x00, 0xC0,  // -2.0
                        0, 0, 0, 0, 0, 0, 0xE0, 0x3F,  // 0.5
                        2, 1, 0, 0, 0, 0, 0, 0])  // 258
        var random = SplitMix64(seed: 808)
        for n in 0..<500 {
            let id = DeviceID(n % 7 == 0 ? "dév-\(n)-📍" : n % 11 == 0 ? "" : "device-\(random.next() % 100_000)")
            let snapshot = Self.randomSnapshot(id, &random)
            let bytes = DeviceStateCodec.encode(snapshot)
            #expect(bytes.count == DeviceStateCodec.size)
            let decoded = try DeviceStateCodec.decode(bytes, device: id)
            #expect(decoded.lastTime == snapshot.lastTime && decoded.coordinate == snapshot.lastCoordinate
                    && decoded.updateCount == snapshot.updateCount)
            #expect(throws: GeofencingError.self) { try DeviceStateCodec.decode(bytes, device: DeviceID(id.rawValue + "x")) }
            #expect(throws: GeofencingError.self) { try DeviceStateCodec.decode(Array(bytes.dropLast()), device: id) }
        }
    }

    /// A version-7 file written with the version-7 schema SQL: `devices` (keys with gaps, some with
    /// instant visits, one with presence and option state) and an event.
    static func writeVersion7(_ path: String, devices: [(key: Int64, snapshot: DetectionEngine.DeviceSnapshot)],
                              extraSQL: String = "") throws {
        let db = try Database(path: path)
        for migration in Schema.migrations[0..<7] { try db.execute(migration) }
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 7;
            INSERT INTO fence (id, position, feature) VALUES ('park', 1, '{"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[2,48]},"properties":{"perimeter:radius":500}}');
            INSERT INTO event (sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside, observed_at, reason)
                VALUES (1, 'e1', 'v1', 'entry', 'park', 'd0', -978306210, 48, 2, NULL, -978306210, 'left');
            INSERT INTO meta VALUES ('processed_updates', 6), ('accepted_sequence', 6), ('arrivals', 6);
            \(extraSQL)
            """)
        let insert = try db.statement("""
            INSERT INTO device (key, id, last_time, latitude, longitude, update_count, instant_visits) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        for (key, snapshot) in devices {
            insert.bind(key, at: 1)
            insert.bind(snapshot.device.rawValue, at: 2)
            insert.bind(snapshot.lastTime, at: 3)
            insert.bind(snapshot.lastCoordinate.latitude, at: 4)
            insert.bind(snapshot.lastCoordinate.longitude, at: 5)
            insert.bind(Int64(bitPattern: snapshot.updateCount), at: 6)
            insert.bind(snapshot.instantVisits.isEmpty ? nil : InstantVisitCodec.encode(snapshot.instantVisits), at: 7)
            try insert.execute()
        }
        if let first = devices.first {
            try db.execute("INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled, ordinal) VALUES (\(first.key), 'park', 990, 1, 1, 0)")
            let option = try db.statement("INSERT INTO device_option VALUES (?, ?)")
            option.bind(first.key, at: 1)
            try option.execute(binding: OptionStateCodec.encode(options: DeviceKeyTests.options, stream: nil), at: 2)
        }
        db.close()
    }

    static func randomVersion7Devices(seed: UInt64) -> [(key: Int64, snapshot: DetectionEngine.DeviceSnapshot)] {
        var random = SplitMix64(seed: seed)
        var key: Int64 = 0
        return (0..<60).map { n in
            key += Int64(1 + random.next() % 3)  // gaps: devices forgotten
            var snapshot = randomSnapshot(DeviceID(n % 5 == 0 ? "dév-\(n)" : "d\(n)"), &random)
            if random.next() % 4 == 0 {
                snapshot.instantVisits = [.init(fence: "park", entryTime: snapshot.lastTime - 1, ordinal: UInt32(random.next() % 3))]
            }
            return (key, snapshot)
        }
    }

    @Test("a version-7 file migrates: every device keeps its key, id, time, position, count, instant visits, presence and option state; commits and loads go on",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func migratesVersion7(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("v7.sqlite")
        let devices = Self.randomVersion7Devices(seed: mode == .shared ? 77 : 78)
        try Self.writeVersion7(path, devices: devices)

        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        let state = try store.load()
        var expected = devices.map(\.snapshot)
        expected[0].memberships = [.init(fence: "park", entryTime: 990, visitSequence: 1, ordinal: 0, hasDwelled: true)]
        expected[0].options = DeviceKeyTests.options
        #expect(state.devices == expected)
        #expect(state.lastEventSequence == 1 && state.processedUpdates == 6)
        #expect(try store.events(after: 0, limit: 10).map(\.event.id) == ["e1"])

        // Known devices written in place, a new one inserted, instant visits cleared and set.
        var random = SplitMix64(seed: 5)
        var changes = StoreChanges()
        var next = expected.map { snapshot in
            var changed = Self.randomSnapshot(snapshot.device, &random)
            changed.memberships = snapshot.memberships
            changed.options = snapshot.options
            changed.instantVisits = snapshot.instantVisits.isEmpty && random.next() % 3 == 0
                ? [.init(fence: "park", entryTime: changed.lastTime, ordinal: 0)] : []
            return changed
        }
        next.append(Self.randomSnapshot("newcomer", &random))
        changes.devices = next.shuffled(using: &random).map { DeviceChange(snapshot: $0, presenceChanged: false) }
        try store.commit(changes)
        #expect(try store.load().devices == next)
        store.close()
        let reopened = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        #expect(try reopened.load().devices == next)
        reopened.close()

        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.integer("PRAGMA user_version") == Schema.version && Schema.version == 10)
        #expect(try db.integer("SELECT count(*) FROM pragma_table_info('device') WHERE name = 'last_time'") == 0)
        #expect(try db.integer("SELECT count(*) FROM device WHERE length(state) <> 40 OR typeof(state) <> 'blob'") == 0)
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'device_v8'") == 0)
        // Keys kept: the migrated devices' keys, the newcomer after the largest.
        #expect(try db.integer("SELECT key FROM device WHERE id = 'newcomer'") == devices.last!.key + 1)
        #expect(try db.integer("SELECT sum(key) FROM device WHERE id <> 'newcomer'") == devices.map(\.key).reduce(0, +))
        #expect(try db.text("PRAGMA integrity_check") == "ok")
    }

    @Test("a migration that fails leaves the version-7 file as it was", arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func failedMigrationLeavesTheFile(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("v7.sqlite")
        // A table in the way of the migration's own: its CREATE fails.
        try Self.writeVersion7(path, devices: Self.randomVersion7Devices(seed: 9), extraSQL: "CREATE TABLE device_v8 (x);")
        #expect(throws: (any Error).self) { _ = try SQLiteGeofencingStore(path: path, lockingMode: mode).load() }
        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.integer("PRAGMA user_version") == 7)
        #expect(try db.integer("SELECT count(*) FROM device") == 60)
        #expect(try db.integer("SELECT count(*) FROM pragma_table_info('device') WHERE name = 'last_time'") == 1)
        #expect(try db.integer("SELECT count(*) FROM presence") == 1)
    }

    @Test("a state column of the wrong size or of another device is reported, at load and at commit")
    func damagedState() throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path)
        try DeviceKeyTests.commit(store, [DeviceKeyTests.device("a", time: 1), DeviceKeyTests.device("b", time: 2)])
        _ = try store.load()
        try store.owner.withConnection("testing") { connection in
            try connection.db.execute("UPDATE device SET state = x'00' WHERE id = 'a'")
        }
        #expect(throws: GeofencingError.self) { _ = try store.load() }
        #expect(throws: (any Error).self) { try DeviceKeyTests.commit(store, [DeviceKeyTests.device("a", time: 3)]) }
        // b's state copied into a's row: its id check is b's.
        try store.owner.withConnection("testing") { connection in
            try connection.db.execute("UPDATE device SET state = (SELECT state FROM device WHERE id = 'b') WHERE id = 'a'")
        }
        #expect(throws: GeofencingError.self) { _ = try store.load() }
        // The commit takes a's key for stale, reads it from the file again, finds the same row: refused.
        #expect(throws: GeofencingError.self) { try DeviceKeyTests.commit(store, [DeviceKeyTests.device("a", time: 4)]) }
        store.close()
    }
}
