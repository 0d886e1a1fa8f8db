import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterSQLite

/// Schema version 7: devices keyed by an integer, presence and option rows by that key, and the keys the
/// store remembers between commits (trusted in exclusive mode, checked against `PRAGMA data_version` in
/// shared mode, forgotten after a failed commit).
@Suite("SQLite store: integer device keys")
struct DeviceKeyTests {
    static let options = DetectionEngine.DeviceOptionSnapshot(pending: [], dwellRepeats: [], anchor: nil, lastSequence: 6)

    /// A version-6 file: devices whose first-appearance order (`position`, with gaps) differs from their
    /// id order, presence in two fences, option state, consent and an event.
    static func writeVersion6(_ path: String, extraSQL: String = "") throws {
        let db = try Database(path: path)
        for migration in Schema.migrations[0..<6] { try db.execute(migration) }
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 6;
            INSERT INTO fence (id, position, feature) VALUES ('park', 1, '{"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[2,48]},"properties":{"perimeter:radius":500}}');
            INSERT INTO fence (id, position, feature) VALUES ('zoo', 2, '{"type":"Feature","id":"zoo","geometry":{"type":"Point","coordinates":[3,48]},"properties":{"perimeter:radius":500}}');
            INSERT INTO device (id, position, last_time, latitude, longitude, update_count) VALUES ('mole', 9, 1002, 47.5, 2.5, 2);
            INSERT INTO device (id, position, last_time, latitude, longitude, update_count) VALUES ('zebra', 2, 1000, 48, 2, 3);
            INSERT INTO device (id, position, last_time, latitude, longitude, update_count) VALUES ('ant', 5, 1001.5, 48, 3, 1);
            INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled, ordinal) VALUES ('zebra', 'park', 990, 1, 1, 0);
            INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled, ordinal) VALUES ('zebra', 'zoo', 995, 2, 0, NULL);
            INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled, ordinal) VALUES ('ant', 'zoo', 1001.5, 3, 0, 1);
            INSERT INTO consent VALUES ('ant', 0);
            INSERT INTO event (sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside, observed_at, reason)
                VALUES (1, 'e1', 'v1', 'entry', 'park', 'zebra', -978306210, 48, 2, NULL, -978306210, 'left');
            INSERT INTO meta VALUES ('processed_updates', 6), ('accepted_sequence', 6), ('arrivals', 6);
            \(extraSQL)
            """)
        let option = try db.statement("INSERT INTO device_option VALUES ('ant', ?)")
        try option.execute(binding: OptionStateCodec.encode(options: Self.options, stream: nil), at: 1)
        db.close()
    }

    static func device(_ id: DeviceID, time: Double, fences: [FenceID] = []) -> DeviceChange {
        DeviceChange(snapshot: DetectionEngine.DeviceSnapshot(
            device: id, lastTime: time, lastCoordinate: Coordinate(latitude: 48, longitude: 2), updateCount: UInt64(time),
            memberships: fences.map { .init(fence: $0, entryTime: time, visitSequence: 1, hasDwelled: false) }), presenceChanged: true)
    }

    static func commit(_ store: SQLiteGeofencingStore, _ devices: [DeviceChange], forgetting forgotten: [DeviceID] = []) throws {
        var changes = StoreChanges()
        changes.devices = devices
        changes.forgottenDevices = forgotten
        try store.commit(changes)
    }

    /// The device rows as (key, id), by key.
    static func keys(_ path: String) throws -> [String] {
        let db = try Database(path: path)
        defer { db.close() }
        let rows = try db.statement("SELECT key, id FROM device ORDER BY key")
        var result: [String] = []
        while try rows.step() { result.append("\(rows.int64(0)):\(rows.string(1))") }
        return result
    }

    @Test("a version-6 file is migrated to integer keys in first-appearance order; presence and option rows follow their device", arguments: [
        SQLiteGeofencingStore.LockingMode.shared, .exclusive,
    ])
    func migrateFromVersion6(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("v6.sqlite")
        try Self.writeVersion6(path)

        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        let state = try store.load()
        #expect(state.devices.map(\.device) == ["zebra", "ant", "mole"], "position order, not id or insertion order")
        #expect(state.devices.map(\.lastTime) == [1000, 1001.5, 1002])
        #expect(state.devices.map(\.updateCount) == [3, 1, 2])
        #expect(state.devices.map { $0.memberships.map(\.fence) } == [["park", "zoo"], ["zoo"], []])
        #expect(state.devices[0].memberships.map(\.ordinal) == [0, nil] && state.devices[0].memberships[0].hasDwelled)
        #expect(state.devices[1].memberships.first?.entryTime == 1001.5 && state.devices[1].memberships.first?.visitSequence == 3)
        #expect(state.devices.map(\.options) == [nil, Self.options, nil])
        #expect(state.deviceConsents == ["ant": false] && state.lastEventSequence == 1 && state.processedUpdates == 6)

        // Known devices are updated by key, a new one gets the next key, a forgotten one loses every row.
        try Self.commit(store, [Self.device("ant", time: 1003, fences: ["park"]), Self.device("newcomer", time: 1004)],
                        forgetting: ["zebra"])
        store.close()
        #expect(try Self.keys(path) == ["2:ant", "3:mole", "4:newcomer"])
        let reopened = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        let after = try reopened.load()
        reopened.close()
        #expect(after.devices.map(\.device) == ["ant", "mole", "newcomer"])
        #expect(after.devices[0].memberships.map(\.fence) == ["park"] && after.devices[0].options == nil)

        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.integer("PRAGMA user_version") == Schema.version && Schema.version == 10)
        #expect(try db.integer("SELECT count(*) FROM presence") == 1)
        #expect(try db.integer("SELECT count(*) FROM presence WHERE typeof(device) <> 'integer'") == 0)
        #expect(try db.integer("SELECT count(*) FROM device_option") == 0)
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v7' OR name = 'device_position'") == 0)
        #expect(try db.text("PRAGMA integrity_check") == "ok")
    }

    @Test("a version-6 file with presence or option state of a device without a row is refused, naming it, and left as it was",
          arguments: ["INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled) VALUES ('ghost', 'park', 1, 1, 0);",
                      "INSERT INTO device_option VALUES ('ghost', x'00');"])
    func orphanRowsInVersion6(extraSQL: String) throws {
        let folder = TemporaryFolder()
        let path = folder.path("v6.sqlite")
        try Self.writeVersion6(path, extraSQL: extraSQL)
        do {
            let store = try SQLiteGeofencingStore(path: path)
            store.close()
            Issue.record("a file with rows of an unknown device was opened")
        } catch {
            #expect(error.code == .incompatibleStorage)
            #expect(error.message.contains("ghost") && error.message.contains("inconsistent"), "\(error.message)")
        }
        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.integer("PRAGMA user_version") == 6)
        #expect(try db.integer("SELECT count(*) FROM device") == 3)
    }

    @Test("two shared stores on one file: keys one remembers are dropped once the other has written")
    func sharedStoresDoNotTrustStaleKeys() throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let first = try SQLiteGeofencingStore(path: path)
        try Self.commit(first, [Self.device("x", time: 1), Self.device("y", time: 2, fences: ["park"])])
        #expect(try first.load().devices.map(\.device) == ["x", "y"])  // remembers x → 1, y → 2

        // The other store forgets y, then adds z, which gets y's old key (the largest key plus one).
        let second = try SQLiteGeofencingStore(path: path)
        try Self.commit(second, [], forgetting: ["y"])
        try Self.commit(second, [Self.device("z", time: 3, fences: ["zoo"])])
        second.close()
        #expect(try Self.keys(path) == ["1:x", "2:z"])

        // Trusting its memory, the first store would now write y's state into z's row.
        try Self.commit(first, [Self.device("y", time: 4), Self.device("x", time: 5)])
        let state = try first.load()
        first.close()
        #expect(state.devices.map(\.device) == ["x", "z", "y"])
        #expect(state.devices.map(\.lastTime) == [5, 3, 4])
        #expect(state.devices.map { $0.memberships.map(\.fence) } == [[], ["zoo"], []])
    }

    @Test("a failed commit forgets the keys of the devices it inserted; the next commit inserts them again", arguments: [
        SQLiteGeofencingStore.LockingMode.shared, .exclusive,
    ])
    func failedCommitForgetsKeys(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        defer { store.close() }
        try Self.commit(store, [Self.device("old", time: 1)])
        _ = try store.load()
        var failing = StoreChanges()
        failing.devices = [Self.device("new", time: 2, fences: ["park"])]
        failing.events = [GeofencingEvent(sequence: 7, event: GeofenceEvent(
            id: "e7", visitID: "v7", kind: .entry, fence: "park", device: "new",
            time: Date(timeIntervalSince1970: 2), coordinate: Coordinate(latitude: 48, longitude: 2)))]
        #expect(throws: GeofencingError.self) { try store.commit(failing) }
        try Self.commit(store, [Self.device("new", time: 3, fences: ["park"])])
        let state = try store.load()
        #expect(state.devices.map(\.device) == ["old", "new"])
        #expect(state.devices.last?.lastTime == 3 && state.devices.last?.memberships.map(\.fence) == ["park"])
    }

    @Test("a store that commits before loading finds known devices by id and inserts the others", arguments: [
        SQLiteGeofencingStore.LockingMode.shared, .exclusive,
    ])
    func commitWithoutLoad(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        try Self.commit(store, [Self.device("a", time: 1, fences: ["park"]), Self.device("b", time: 2)])
        store.close()
        let again = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        try Self.commit(again, [Self.device("b", time: 3, fences: ["zoo"]), Self.device("c", time: 4)], forgetting: ["a"])
        again.close()
        #expect(try Self.keys(path) == ["2:b", "3:c"])
        let reopened = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        defer { reopened.close() }
        let state = try reopened.load()
        #expect(state.devices.map(\.lastTime) == [3, 4])
        #expect(state.devices.map { $0.memberships.map(\.fence) } == [["zoo"], []])
    }

    @Test("new devices in blocks: 75 in one commit get keys 1… in order of first appearance (after the largest key), and a device listed twice ends with its last change, as in memory")
    func newDevicesInBlocks() throws {
        let folder = TemporaryFolder()
        let path = folder.path("blocks.sqlite")
        let store = try SQLiteGeofencingStore(path: path)
        defer { store.close() }
        let memory = InMemoryGeofencingStore()
        // 75 new devices: statements of 32, 32, 8 and three of one row.
        let first = (0..<75).map { Self.device(DeviceID("n\(74 - $0)"), time: Double($0 + 1), fences: $0 % 3 == 0 ? ["park"] : []) }
        var changes = StoreChanges()
        changes.devices = first
        try store.commit(changes)
        try memory.commit(changes)
        #expect(try Self.keys(path) == first.enumerated().map { "\($0.offset + 1):\($0.element.snapshot.device.rawValue)" })
        // Forget the last key's device: the next new devices continue after the largest key left.
        try Self.commit(store, [], forgetting: ["n0"])
        try memory.commit({ var c = StoreChanges(); c.forgottenDevices = ["n0"]; return c }())
        // Known and new devices mixed; "twice" listed twice (not something a service sends): its last
        // change wins (with presence: `PresenceRowTests.deviceListedTwice`).
        changes = StoreChanges()
        changes.devices = [Self.device("twice", time: 100), Self.device("n5", time: 101),
                           Self.device("fresh", time: 102), Self.device("twice", time: 103)]
        try store.commit(changes)
        try memory.commit(changes)
        let keys = try Self.keys(path)
        #expect(keys.suffix(2) == ["75:twice", "76:fresh"], "\(keys.suffix(3))")
        #expect(keys.count == 76)
        let loaded = try store.load(), expected = try memory.load()
        let differing = zip(loaded.devices.sorted { $0.device < $1.device }, expected.devices.sorted { $0.device < $1.device }).filter { $0 != $1 }
        #expect(loaded.devices.count == expected.devices.count && differing.isEmpty, "\(differing.prefix(2))")
        #expect(loaded.devices.first { $0.device == "twice" }?.lastTime == 103)
        // Reopened: the keys were remembered right (the next commit writes known devices in place).
        try Self.commit(store, [Self.device("twice", time: 104), Self.device("n74", time: 105)])
        #expect(try store.load().devices.filter { ["twice", "n74"].contains($0.device) }.map(\.lastTime).sorted() == [104, 105])
    }
}
