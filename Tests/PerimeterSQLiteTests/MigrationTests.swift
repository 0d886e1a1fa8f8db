import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterSQLite

@Suite("SQLite store: schema migration and option state")
struct MigrationTests {
    /// A version-1 file as the previous release wrote it: one fence, one device inside it, one event.
    static func writeVersion1(_ path: String) throws {
        let db = try Database(path: path)
        try db.execute(Schema.migrations[0])
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 1;
            INSERT INTO fence VALUES ('park', 1, '{"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[2,48]},"properties":{"perimeter:radius":500,"perimeter:dwell":60}}', NULL, NULL, 60, NULL);
            INSERT INTO device (id, last_time, latitude, longitude, update_count) VALUES ('phone', 1000, 48, 2, 1);
            INSERT INTO presence VALUES ('phone', 'park', 1000, 0, 0);
            INSERT INTO event VALUES (1, 'e1', 'v1', 'entry', 'park', 'phone', -978306200, 48, 2, NULL, -978306200, 'left');
            INSERT INTO meta VALUES ('processed_updates', 1);
            """)
        db.close()
    }

    @Test("a version-1 file is migrated in place, keeps its data, and then holds option state")
    func migrateFromVersion1() throws {
        let folder = TemporaryFolder()
        let path = folder.path("v1.sqlite")
        try Self.writeVersion1(path)

        let store = try SQLiteGeofencingStore(path: path)
        let state = try store.load()
        #expect(state.fences.map(\.id) == ["park"])
        #expect(state.fences.first?.additionSequence == nil)
        #expect(state.devices.map(\.device) == ["phone"])
        #expect(state.devices.first?.memberships.map(\.fence) == ["park"])
        #expect(state.devices.first?.options == nil)
        #expect(state.processedUpdates == 1)
        #expect(state.acceptedSequence == 0)

        // The old state continues under options: no entry re-fires, the dwell falls due as before.
        let options = GeofencingOptions(detectionOptions: DetectionOptions(dwellEvery: 30))
        var service = GeofencingService(store: store)
        try service.configure(options)
        #expect(try service.process(LocationUpdate(device: "phone", time: Date(timeIntervalSince1970: 1030),
                                                   latitude: 48, longitude: 2)).isEmpty)
        #expect(try service.advance(to: Date(timeIntervalSince1970: 1090)).map(\.event.kind) == [.dwell, .dwell])
        store.close()

        let reopened = try SQLiteGeofencingStore(path: path)
        let db = try Database(path: path)
        #expect(try db.integer("PRAGMA user_version") == Schema.version)
        #expect(try db.integer("SELECT count(*) FROM device_option") == 1)
        db.close()
        service = GeofencingService(store: reopened)
        try service.configure(options)
        #expect(try service.advance(to: Date(timeIntervalSince1970: 1120)).map(\.event.time) == [Date(timeIntervalSince1970: 1120)],
                "the repeated-dwell count survived the restart")
        #expect(try service.loggedEvents(after: 0).map(\.sequence) == [1, 2, 3, 4])
        reopened.close()
    }

    /// A version-2 file written with the version-2 schema SQL: devices whose first-appearance (rowid)
    /// order differs from their id order, presence, option state, events, counters and consent.
    static func writeVersion2(_ path: String, options: [UInt8]) throws {
        let db = try Database(path: path)
        try db.execute(Schema.migrations[0])
        try db.execute(Schema.migrations[1])
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 2;
            INSERT INTO fence VALUES ('park', 1, '{"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[2,48]},"properties":{"perimeter:radius":500}}', NULL, NULL, NULL, NULL, NULL);
            INSERT INTO fence VALUES ('zoo', 2, '{"type":"Feature","id":"zoo","geometry":{"type":"Point","coordinates":[3,48]},"properties":{"perimeter:radius":500}}', NULL, NULL, NULL, NULL, 4);
            INSERT INTO device (id, last_time, latitude, longitude, update_count) VALUES ('zebra', 1000, 48, 2, 3);
            INSERT INTO device (id, last_time, latitude, longitude, update_count) VALUES ('ant', 1001.5, 48, 3, 1);
            INSERT INTO device (id, last_time, latitude, longitude, update_count) VALUES ('gone', 999, 47, 2, 2);
            DELETE FROM device WHERE id = 'gone';
            INSERT INTO device (id, last_time, latitude, longitude, update_count) VALUES ('mole', 1002, 47.5, 2.5, 2);
            INSERT INTO presence VALUES ('zebra', 'park', 990, 1, 1);
            INSERT INTO presence VALUES ('ant', 'zoo', 1001.5, 2, 0);
            INSERT INTO consent VALUES ('ant', 0);
            INSERT INTO event VALUES (1, 'e1', 'v1', 'entry', 'park', 'zebra', -978306210, 48, 2, NULL, -978306210, 'left');
            INSERT INTO event VALUES (2, 'e2', 'v2', 'entry', 'zoo', 'ant', -978305198.5, 48, 3, NULL, -978305198.5, 'left');
            INSERT INTO meta VALUES ('processed_updates', 6), ('accepted_sequence', 6), ('arrivals', 6), ('service_consent', 1);
            """)
        let option = try db.statement("INSERT INTO device_option VALUES ('zebra', ?)")
        try option.execute(binding: options, at: 1)
        db.close()
    }

    @Test("a version-2 file is migrated to keyed device rows: load returns the same state, devices in first-appearance order")
    func migrateFromVersion2() throws {
        let folder = TemporaryFolder()
        let path = folder.path("v2.sqlite")
        let options = DetectionEngine.DeviceOptionSnapshot(pending: [], dwellRepeats: [], anchor: nil, lastSequence: 6)
        try Self.writeVersion2(path, options: OptionStateCodec.encode(options: options, stream: nil))

        for mode in [SQLiteGeofencingStore.LockingMode.shared, .exclusive] {
            let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
            let state = try store.load()
            #expect(state.devices.map(\.device) == ["zebra", "ant", "mole"], "rowid order, not id order")
            #expect(state.devices.map(\.lastTime) == [1000, 1001.5, 1002])
            #expect(state.devices.map(\.updateCount) == [3, 1, 2])
            #expect(state.devices.map(\.lastCoordinate.latitude) == [48, 48, 47.5])
            #expect(state.devices.map { $0.memberships.map(\.fence) } == [["park"], ["zoo"], []])
            #expect(state.devices.first?.memberships.first?.hasDwelled == true)
            #expect(state.devices.flatMap(\.memberships).allSatisfy { $0.ordinal == nil }, "visits of old rows keep their old ids")
            #expect(state.devices.allSatisfy { $0.instantVisits.isEmpty })
            #expect(state.devices.map(\.options) == [options, nil, nil])
            #expect(state.fences.map(\.id) == ["park", "zoo"] && state.fences.last?.additionSequence == 4)
            #expect(state.deviceConsents == ["ant": false] && state.serviceConsent == true)
            #expect(state.lastEventSequence == 2 && state.processedUpdates == 6 && state.acceptedSequence == 6)

            // Known devices are updated in place, a new one goes last, and the log continues.
            var changes = StoreChanges()
            let next = DeviceID(mode == .shared ? "bee" : "aardvark")
            changes.devices = [
                DeviceChange(snapshot: DetectionEngine.DeviceSnapshot(
                    device: "ant", lastTime: 1003, lastCoordinate: Coordinate(latitude: 48, longitude: 3), updateCount: 2,
                    memberships: []), presenceChanged: true),
                DeviceChange(snapshot: DetectionEngine.DeviceSnapshot(
                    device: next, lastTime: 1004, lastCoordinate: Coordinate(latitude: 1, longitude: 1), updateCount: 1,
                    memberships: []), presenceChanged: false),
            ]
            changes.events = [GeofencingEvent(sequence: 3, event: GeofenceEvent(
                id: "e3", visitID: "v2", kind: .exit, fence: "zoo", device: "ant",
                time: Date(timeIntervalSince1970: 1003), coordinate: Coordinate(latitude: 48, longitude: 3)))]
            changes.processedUpdates = state.processedUpdates + 2
            try store.commit(changes)
            store.close()

            let reopened = try SQLiteGeofencingStore(path: path, lockingMode: mode)
            let after = try reopened.load()
            #expect(after.devices.map(\.device) == state.devices.map(\.device) + [next])
            #expect(after.devices[1].lastTime == 1003 && after.devices[1].memberships.isEmpty)
            #expect(after.lastEventSequence == 3)
            reopened.close()
            // Undo, so that the second mode starts from the same migrated data.
            let db = try Database(path: path)
            // The device's state as the migration wrote it (version 8: one BLOB).
            let ant = try db.statement("UPDATE device SET state = ? WHERE id = 'ant'")
            ant.bind(DeviceStateCodec.encode(DetectionEngine.DeviceSnapshot(
                device: "ant", lastTime: 1001.5, lastCoordinate: Coordinate(latitude: 48, longitude: 3), updateCount: 1,
                memberships: [])), at: 1)
            try ant.execute()
            try db.execute("""
                DELETE FROM device WHERE id = '\(next)'; DELETE FROM event WHERE sequence = 3;
                UPDATE meta SET value = 6 WHERE key = 'processed_updates';
                """)
            // Its presence as the migration wrote it (version 10: one row a device).
            let presence = try db.statement("INSERT INTO presence (device, memberships) VALUES ((SELECT key FROM device WHERE id = 'ant'), ?)")
            presence.bind(PresenceCodec.encode([.init(fence: "zoo", entryTime: 1001.5, visitSequence: 2, ordinal: nil, hasDwelled: false)]), at: 1)
            try presence.execute()
            db.close()
        }
        let db = try Database(path: path)
        #expect(try db.integer("PRAGMA user_version") == Schema.version)
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'device_v3'") == 0)
        #expect(try db.text("PRAGMA integrity_check") == "ok")
        db.close()
    }

    /// A version-3 file written with the version-3 schema SQL: events of a fence that still exists (with a
    /// name, group and properties), of one whose feature has no properties, and of one since removed.
    static func writeVersion3(_ path: String) throws {
        let db = try Database(path: path)
        for migration in Schema.migrations[0..<3] { try db.execute(migration) }
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 3;
            INSERT INTO fence VALUES ('park', 1, '{"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[2,48]},"properties":{"name":"Park","perimeter:group":"parks","perimeter:radius":500,"tags":["a",1.5,null],"é":{"x":true}}}', 'parks', 'Park', NULL, NULL, NULL);
            INSERT INTO fence VALUES ('bare', 2, '{"type":"Feature","id":"bare","geometry":{"type":"Point","coordinates":[3,48]},"properties":null}', NULL, NULL, NULL, NULL, NULL);
            INSERT INTO event VALUES (1, 'e1', 'v1', 'entry', 'park', 'phone', -978306200, 48, 2, NULL, -978306200, 'left');
            INSERT INTO event VALUES (2, 'e2', 'v2', 'entry', 'gone', 'phone', -978306100, 48, 2, NULL, -978306100, 'left');
            INSERT INTO event VALUES (3, 'e3', 'v3', 'entry', 'bare', 'phone', -978306000, 48, 3, NULL, -978306000, 'left');
            INSERT INTO meta VALUES ('processed_updates', 3);
            """)
        db.close()
    }

    @Test("a version-3 file is migrated: logged events get the name, group and properties of their fence if it still exists")
    func migrateFromVersion3() throws {
        let folder = TemporaryFolder()
        let path = folder.path("v3.sqlite")
        try Self.writeVersion3(path)
        let store = try SQLiteGeofencingStore(path: path)
        let events = try store.events(after: 0, limit: 10)
        #expect(events.map(\.sequence) == [1, 2, 3])
        #expect(events[0].fenceName == "Park" && events[0].group == "parks" && events[0].message == nil)
        #expect(events[0].properties == ["name": "Park", "perimeter:group": "parks", "perimeter:radius": 500,
                                         "tags": ["a", 1.5, nil], "é": ["x": true]])
        #expect(events[1].fenceName == nil && events[1].group == nil && events[1].properties.isEmpty, "the fence was removed")
        #expect(events[2].fenceName == nil && events[2].properties.isEmpty, "a feature without properties")

        // New events are stored with theirs; the log continues.
        var changes = StoreChanges()
        changes.events = [GeofencingEvent(sequence: 4, event: GeofenceEvent(
            id: "e4", visitID: "v1", kind: .exit, fence: "park", device: "phone",
            time: Date(timeIntervalSince1970: 1003), coordinate: Coordinate(latitude: 48, longitude: 3)),
            fenceName: "Park", group: "parks", properties: ["name": "Park"], message: "bye")]
        try store.commit(changes)
        store.close()
        let reopened = try SQLiteGeofencingStore(path: path)
        #expect(try reopened.events(after: 3, limit: 10) == changes.events)
        reopened.close()
        let db = try Database(path: path)
        #expect(try db.integer("PRAGMA user_version") == Schema.version)
        #expect(try db.text("PRAGMA integrity_check") == "ok")
        db.close()
    }

    @Test("stored event properties that are not a JSON object are refused as incompatible storage, naming the event")
    func damagedEventProperties() throws {
        let folder = TemporaryFolder()
        let path = folder.path("bad-events.sqlite")
        try Self.writeVersion3(path)
        try SQLiteGeofencingStore(path: path).close()
        let db = try Database(path: path)
        try db.execute("UPDATE event SET properties = '[1,' WHERE sequence = 2")
        db.close()
        let store = try SQLiteGeofencingStore(path: path)
        defer { store.close() }
        do {
            _ = try store.events(after: 0, limit: 10)
            Issue.record("expected an error")
        } catch let error as GeofencingError {
            #expect(error.code == .incompatibleStorage)
            #expect(error.message.contains("event 2"), "\(error.message)")
        }
    }

    /// The page size recorded in an SQLite file's header (bytes 16–17, big-endian; 1 means 65,536).
    static func headerPageSize(_ path: String) throws -> Int {
        let header = try #require(FileManager.default.contents(atPath: path)?.prefix(18))
        let size = Int(header[header.startIndex + 16]) << 8 | Int(header[header.startIndex + 17])
        return size == 1 ? 65_536 : size
    }

    @Test("a new store file has 1 KiB pages; a file made with 4 KiB pages keeps them, migrates and takes commits")
    func pageSize() throws {
        let folder = TemporaryFolder()
        let fresh = folder.path("fresh.sqlite")
        try SQLiteGeofencingStore(path: fresh).close()
        #expect(try Self.headerPageSize(fresh) == Schema.pageSize)
        #expect(Schema.pageSize == 1024)

        let old = folder.path("v2.sqlite")
        let options = DetectionEngine.DeviceOptionSnapshot(pending: [], dwellRepeats: [], anchor: nil, lastSequence: 6)
        try Self.writeVersion2(old, options: OptionStateCodec.encode(options: options, stream: nil))
        #expect(try Self.headerPageSize(old) == 4096)
        for mode in [SQLiteGeofencingStore.LockingMode.shared, .exclusive] {
            let store = try SQLiteGeofencingStore(path: old, lockingMode: mode)
            var changes = StoreChanges()
            changes.devices = [DeviceChange(snapshot: DetectionEngine.DeviceSnapshot(
                device: DeviceID("new-\(mode)"), lastTime: 2000, lastCoordinate: Coordinate(latitude: 1, longitude: 1),
                updateCount: 1, memberships: []), presenceChanged: false)]
            try store.commit(changes)
            store.close()
        }
        #expect(try Self.headerPageSize(old) == 4096)
        let reopened = try SQLiteGeofencingStore(path: old)
        #expect(try reopened.load().devices.map(\.device).suffix(2) == ["new-shared", "new-exclusive"])
        reopened.close()
    }

    @Test("damaged option state is refused as incompatible storage, naming the device")
    func damagedOptionState() throws {
        let folder = TemporaryFolder()
        let path = folder.path("bad.sqlite")
        try Self.writeVersion1(path)
        try SQLiteGeofencingStore(path: path).close()
        let db = try Database(path: path)
        try db.execute("INSERT INTO device_option VALUES ((SELECT key FROM device WHERE id = 'phone'), x'0103ffff')")
        db.close()
        let store = try SQLiteGeofencingStore(path: path)
        defer { store.close() }
        do {
            _ = try store.load()
            Issue.record("expected an error")
        } catch let error as GeofencingError {
            #expect(error.code == .incompatibleStorage)
            #expect(error.message.contains("phone"))
        }
    }

    @Test("option state round-trips bit for bit; every truncation is an error, never a crash", arguments: [1, 2, 3] as [UInt64])
    func codec(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        func number() -> Double {
            [0.0, -0.0, 1e-300, -.infinity, .greatestFiniteMagnitude, Double.random(in: -1e9...1e9, using: &rng)]
                .randomElement(using: &rng)!
        }
        func coordinate() -> Coordinate { Coordinate(latitude: number(), longitude: number()) }
        func fix() -> DetectionEngine.FixSnapshot {
            .init(time: number(), coordinate: coordinate(), accuracy: Bool.random(using: &rng) ? number() : nil)
        }
        let options = DetectionEngine.DeviceOptionSnapshot(
            pending: (0..<Int.random(in: 0...3, using: &rng)).map { i in
                .init(fence: FenceID("f\(i) é"), toInside: Bool.random(using: &rng), since: number(), observedAt: number(),
                      coordinate: coordinate(), sequence: rng.next())
            },
            dwellRepeats: (0..<Int.random(in: 0...3, using: &rng)).map { i in
                .init(fence: FenceID("r\(i)"), visitSequence: rng.next(), count: Int.random(in: 0...1000, using: &rng))
            },
            anchor: Bool.random(using: &rng) ? fix() : nil, lastSequence: Int64.random(in: .min ... .max, using: &rng))
        let stream = DetectionEngine.DeviceStreamSnapshot(
            buffered: (0..<Int.random(in: 0...4, using: &rng)).map { _ in .init(fix: fix(), arrival: rng.next()) },
            newest: number(),
            recent: (0..<Int.random(in: 0...40, using: &rng)).map { _ in .init(time: number(), coordinate: coordinate(), accuracy: nil) })
        for (o, s) in [(options, stream), (options, nil), (nil, stream), (nil, nil)] as [(DetectionEngine.DeviceOptionSnapshot?, DetectionEngine.DeviceStreamSnapshot?)] {
            let bytes = OptionStateCodec.encode(options: o, stream: s)
            let decoded = try OptionStateCodec.decode(bytes)
            #expect(decoded.options == o && decoded.stream == s)
            // Bit for bit: re-encoding the decoded value gives the same bytes (-0.0 stays -0.0).
            #expect(OptionStateCodec.encode(options: decoded.options, stream: decoded.stream) == bytes)
            for cut in 0..<bytes.count {
                #expect(throws: OptionStateCodec.DecodingError.self) { try OptionStateCodec.decode(Array(bytes[..<cut])) }
            }
            #expect(throws: OptionStateCodec.DecodingError.self) { try OptionStateCodec.decode(bytes + [0]) }
        }
    }

    @Test("visit ordinals and instant visits round-trip through the store; old rows stay legacy")
    func visitOrdinals() throws {
        let folder = TemporaryFolder()
        let path = folder.path("ids.sqlite")
        try Self.writeVersion2(path, options: OptionStateCodec.encode(
            options: DetectionEngine.DeviceOptionSnapshot(lastSequence: 6), stream: nil))
        let store = try SQLiteGeofencingStore(path: path)
        let snapshot = DetectionEngine.DeviceSnapshot(
            device: "ant", lastTime: 1003, lastCoordinate: Coordinate(latitude: 48, longitude: 3), updateCount: 9,
            memberships: [.init(fence: "park", entryTime: 1003, visitSequence: 8, ordinal: 2, hasDwelled: false),
                          .init(fence: "zoo", entryTime: 1001.5, visitSequence: 2, ordinal: nil, hasDwelled: true)],
            instantVisits: [.init(fence: "park", entryTime: 1003, ordinal: 1), .init(fence: "zoo é", entryTime: -0.0, ordinal: .max)])
        var changes = StoreChanges()
        changes.devices = [DeviceChange(snapshot: snapshot, presenceChanged: true),
                           DeviceChange(snapshot: .init(device: "newcomer", lastTime: 5, lastCoordinate: Coordinate(latitude: 1, longitude: 1),
                                                        updateCount: 1, memberships: [], instantVisits: snapshot.instantVisits),
                                        presenceChanged: false)]
        try store.commit(changes)
        store.close()

        let reopened = try SQLiteGeofencingStore(path: path)
        let state = try reopened.load()
        let ant = try #require(state.devices.first { $0.device == "ant" })
        #expect(ant.memberships == snapshot.memberships)
        #expect(ant.instantVisits == snapshot.instantVisits)
        #expect(ant.instantVisits.last?.entryTime.sign == .minus, "bit for bit")
        #expect(state.devices.first { $0.device == "newcomer" }?.instantVisits == snapshot.instantVisits)
        #expect(state.devices.first { $0.device == "zebra" }?.memberships.first?.ordinal == nil)
        reopened.close()

        // A device that has no instant visits any more gets NULL again.
        let again = try SQLiteGeofencingStore(path: path)
        var clear = StoreChanges()
        var cleared = snapshot
        cleared.instantVisits = []
        clear.devices = [DeviceChange(snapshot: cleared, presenceChanged: false)]
        try again.commit(clear)
        again.close()
        let db = try Database(path: path)
        #expect(try db.integer("SELECT count(*) FROM device WHERE instant_visits IS NOT NULL") == 1)
        try db.execute("UPDATE device SET instant_visits = x'0201' WHERE id = 'newcomer'")
        db.close()
        let damaged = try SQLiteGeofencingStore(path: path)
        defer { damaged.close() }
        do {
            _ = try damaged.load()
            Issue.record("expected an error")
        } catch let error as GeofencingError {
            #expect(error.code == .incompatibleStorage && error.message.contains("newcomer"))
        }
    }

    @Test("instant visits: the codec round-trips and refuses every truncation")
    func instantVisitCodec() throws {
        let visits: [DetectionEngine.InstantVisitSnapshot] = [
            .init(fence: "a", entryTime: 1.5, ordinal: 0), .init(fence: "bé", entryTime: -.infinity, ordinal: 7),
        ]
        let bytes = InstantVisitCodec.encode(visits)
        #expect(try InstantVisitCodec.decode(bytes) == visits)
        for cut in 0..<bytes.count {
            #expect(throws: OptionStateCodec.DecodingError.self) { try InstantVisitCodec.decode(Array(bytes[..<cut])) }
        }
        #expect(throws: OptionStateCodec.DecodingError.self) { try InstantVisitCodec.decode(bytes + [0]) }
    }
}
