import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

/// Schema version 9: event rows in compact form (`EventRowCodec`) — an engine's ids as 16-byte BLOBs,
/// kind and reason as codes — and migration 9 from files of version 8, whose rows keep their ids' text.
@Suite("SQLite store: compact event rows")
struct EventRowTests {
    /// A version-8 file written with the version-8 schema SQL, `events` logged in its text layout.
    static func writeVersion8(_ path: String, events: [GeofencingEvent], extraSQL: String = "") throws {
        let db = try Database(path: path)
        for migration in Schema.migrations[0..<8] { try db.execute(migration) }
        try db.execute(Schema.deviceStateSwap)  // migration 8's last part (no device rows to fill)
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 8;
            INSERT INTO meta VALUES ('processed_updates', 6), ('accepted_sequence', 6), ('arrivals', 6);
            \(extraSQL)
            """)
        let insert = try db.statement("""
            INSERT INTO event (sequence, id, visit_id, kind, fence, device, time, latitude, longitude, time_inside,
                observed_at, reason, fence_name, grp, properties, message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let writer = JSONWriter()
        for logged in events {
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
            insert.bind(logged.fenceName, at: 13)
            insert.bind(logged.group, at: 14)
            insert.bind(logged.properties.isEmpty ? nil : writer.string(.object(logged.properties)), at: 15)
            insert.bind(logged.message, at: 16)
            try insert.execute()
        }
        db.close()
    }

    static func randomEvents(_ range: ClosedRange<Int64>, _ random: inout SplitMix64) -> [GeofencingEvent] {
        range.map { EventLogTests.randomEvent($0, &random) }
    }

    /// Events an engine made (ids held as bits until read), numbered from `first`.
    static func engineEvents(from first: Int64) -> [GeofencingEvent] {
        let park = Fence(id: "park", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100)))
        var engine = DetectionEngine(fences: [park])
        var made: [GeofenceEvent] = []
        for k in 0..<40 {
            let latitude = k % 4 < 2 ? 0.0 : 0.01
            made += engine.process(LocationUpdate(device: DeviceID("car\(k % 3)"), time: Date(timeIntervalSince1970: 1_000 + Double(k) * 10),
                                                  coordinate: Coordinate(latitude: latitude, longitude: 0)))
        }
        return made.enumerated().map { GeofencingEvent(sequence: first + Int64($0.offset), event: $0.element) }
    }

    @Test("a version-8 file migrates: every event reads back equal, old ids stay text, kind and reason become codes; new events are compact",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func migratesVersion8(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: mode == .shared ? 9 : 90)
        let folder = TemporaryFolder()
        let path = folder.path("v8.sqlite")
        let old = Self.randomEvents(1...300, &random)
        #expect(Set(old.map(\.event.kind)).count == GeofenceEventKind.allCases.count)
        #expect(Set(old.map(\.event.reason)).count == ExitReason.allCases.count)
        try Self.writeVersion8(path, events: old)

        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        #expect(try store.load().lastEventSequence == 300)
        #expect(try store.events(after: 0, limit: 1_000) == old)
        #expect(try store.events(after: 17, limit: 40) == Array(old[17..<57]))
        let engine = Self.engineEvents(from: 301)
        #expect(engine.count > 8)
        let more = engine + Self.randomEvents(Int64(301 + engine.count)...Int64(360 + engine.count), &random)
        var changes = StoreChanges()
        changes.events = more
        try store.commit(changes)
        #expect(try store.events(after: 0, limit: 1_000) == old + more)
        store.close()
        let reopened = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        #expect(try reopened.load().lastEventSequence == Int64(300 + more.count))
        #expect(try reopened.events(after: 290, limit: 1_000) == Array((old + more)[290...]))
        reopened.close()

        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.integer("PRAGMA user_version") == Schema.version && Schema.version == 10)
        #expect(try db.integer("SELECT count(*) FROM event WHERE sequence <= 300 AND (typeof(id) <> 'text' OR typeof(visit_id) <> 'text')") == 0)
        #expect(try db.integer("SELECT count(*) FROM event WHERE typeof(kind) <> 'integer' OR typeof(reason) <> 'integer'") == 0)
        // The engine's events: both ids 16 bytes.
        #expect(try db.integer("SELECT count(*) FROM event WHERE sequence > 300 AND sequence <= \(300 + engine.count) AND (typeof(id) <> 'blob' OR length(id) <> 16 OR typeof(visit_id) <> 'blob' OR length(visit_id) <> 16)") == 0)
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'event_v9'") == 0)
        #expect(try db.text("PRAGMA integrity_check") == "ok")
    }

    @Test("a migration that fails leaves the version-8 file as it was", arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func failedMigrationLeavesTheFile(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: 8)
        let folder = TemporaryFolder()
        let path = folder.path("v8.sqlite")
        // A table in the way of the migration's own: its CREATE fails.
        try Self.writeVersion8(path, events: Self.randomEvents(1...50, &random), extraSQL: "CREATE TABLE event_v9 (x);")
        #expect(throws: (any Error).self) { _ = try SQLiteGeofencingStore(path: path, lockingMode: mode).load() }
        let db = try Database(path: path)
        defer { db.close() }
        #expect(try db.integer("PRAGMA user_version") == 8)
        #expect(try db.integer("SELECT count(*) FROM event") == 50)
        #expect(try db.integer("SELECT count(*) FROM event WHERE typeof(kind) = 'text' AND typeof(reason) = 'text'") == 50)
    }

    @Test("kinds and reasons the migration does not know, unknown codes and ids of the wrong size are refused, naming the event")
    func damagedRows() throws {
        var random = SplitMix64(seed: 99)
        let folder = TemporaryFolder()
        let path = folder.path("damaged.sqlite")
        try Self.writeVersion8(path, events: Self.randomEvents(1...6, &random), extraSQL: "")
        let db = try Database(path: path)
        try db.execute("UPDATE event SET kind = 'teleport' WHERE sequence = 2; UPDATE event SET reason = 'vanished' WHERE sequence = 3")
        db.close()
        try SQLiteGeofencingStore(path: path).close()  // migrates
        let migrated = try Database(path: path)
        #expect(try migrated.text("SELECT kind FROM event WHERE sequence = 2") == "teleport")
        try migrated.execute("UPDATE event SET kind = 9 WHERE sequence = 4; UPDATE event SET reason = 7 WHERE sequence = 5; UPDATE event SET visit_id = x'0102' WHERE sequence = 6")
        migrated.close()
        let store = try SQLiteGeofencingStore(path: path)
        defer { store.close() }
        #expect(try store.events(after: 0, limit: 1).count == 1)
        for (sequence, words) in [(2, "kind \"teleport\""), (3, "reason \"vanished\""), (4, "kind code 9"), (5, "reason code 7"), (6, "visit id of 2 bytes")] as [(Int64, String)] {
            do {
                _ = try store.events(after: sequence - 1, limit: 1)
                Issue.record("expected an error for event \(sequence)")
            } catch let error as GeofencingError {
                #expect(error.code == .incompatibleStorage)
                #expect(error.message.contains("event \(sequence)") && error.message.contains(words), "\(error.message)")
            }
        }
    }

    @Test("the codes and the id bytes: fixed values, and every kind and reason round-trips")
    func codec() {
        #expect(GeofenceEventKind.allCases.map(EventRowCodec.code(of:)) == [0, 1, 2, 3, 4])
        #expect(ExitReason.allCases.map(EventRowCodec.code(of:)) == [0, 1, 2])
        for kind in GeofenceEventKind.allCases { #expect(EventRowCodec.kind(code: EventRowCodec.code(of: kind)) == kind) }
        for reason in ExitReason.allCases { #expect(EventRowCodec.reason(code: EventRowCodec.code(of: reason)) == reason) }
        #expect(EventRowCodec.kind(code: 5) == nil && EventRowCodec.kind(code: -1) == nil && EventRowCodec.reason(code: 3) == nil)
        var bytes: [UInt8] = [9]
        EventRowCodec.append((high: 0x0123_4567_89AB_CDEF, low: 0xFEDC_BA98_7654_3210), to: &bytes)
        #expect(bytes == [9, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF, 0xFE, 0xDC, 0xBA, 0x98, 0x76, 0x54, 0x32, 0x10])
        #expect(EventRowCodec.idText(Array(bytes.dropFirst())) == "0123456789abcdeffedcba9876543210")
        #expect(EventRowCodec.idText(Array(bytes)) == nil && EventRowCodec.idText([]) == nil)
    }
}
