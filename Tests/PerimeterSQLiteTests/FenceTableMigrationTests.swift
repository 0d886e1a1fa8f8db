import Foundation
import PerimeterFences
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterSQLite

/// Schema version 6: the fence table becomes a rowid table with the feature text last.
@Suite("SQLite store: the fence table migration (schema 6)")
struct FenceTableMigrationTests {
    /// A version-5 file written with the version-5 schema SQL: three fences whose id order differs from
    /// their position order, one with every derived column set, and a device inside one of them.
    static func writeVersion5(_ path: String) throws {
        let db = try Database(path: path)
        for migration in Schema.migrations[0..<5] { try db.execute(migration) }
        try db.execute("""
            PRAGMA application_id = \(Schema.applicationID); PRAGMA user_version = 5;
            INSERT INTO fence (id, position, feature, grp, name, dwell_time, expires_at, added_sequence) VALUES
                ('zoo', 1, '{"type":"Feature","id":"zoo","geometry":{"type":"Point","coordinates":[3,48]},"properties":{"perimeter:radius":500}}', NULL, NULL, NULL, NULL, NULL),
                ('park', 2, '{"type":"Feature","id":"park","geometry":{"type":"Point","coordinates":[2,48]},"properties":{"name":"Park","perimeter:group":"parks","perimeter:radius":500,"perimeter:dwell":60}}', 'parks', 'Park', 60, 1900000000, 7),
                ('alley', 3, '{"type":"Feature","id":"alley","geometry":{"type":"Point","coordinates":[4,48]},"properties":{"perimeter:radius":50}}', NULL, NULL, NULL, NULL, NULL);
            INSERT INTO device (id, position, last_time, latitude, longitude, update_count) VALUES ('phone', 1, 1000, 48, 2, 1);
            INSERT INTO presence (device, fence, entry_time, visit_sequence, has_dwelled) VALUES ('phone', 'park', 1000, 0, 0);
            INSERT INTO meta VALUES ('processed_updates', 1);
            """)
        db.close()
    }

    @Test("a version-5 file is migrated: the same fences load in position order from a rowid table, feature last")
    func migrateFromVersion5() throws {
        let folder = TemporaryFolder()
        let path = folder.path("v5.sqlite")
        try Self.writeVersion5(path)

        let store = try SQLiteGeofencingStore(path: path)
        let state = try store.load()
        #expect(state.fences.map(\.id) == ["zoo", "park", "alley"], "position order, not id order")
        #expect(state.fences.map(\.position) == [1, 2, 3])
        let park = try #require(state.fences.first { $0.id == "park" })
        #expect(park.group == "parks" && park.name == "Park" && park.dwellTime == 60 && park.expiresAt == 1_900_000_000
            && park.additionSequence == 7)
        #expect(park.feature.hasPrefix(#"{"type":"Feature","id":"park""#))
        #expect(state.devices.first?.memberships.map(\.fence) == ["park"])

        // An existing fence is replaced in place (its position kept), a new one is added, one removed.
        var changes = StoreChanges()
        changes.fences = [
            .upsert(StoredFence(id: "park", position: 2, feature: #"{"type":"Feature","id":"park","geometry":null}"#,
                                group: "gardens")),
            .upsert(StoredFence(id: "beach", position: 4, feature: #"{"type":"Feature","id":"beach","geometry":null}"#)),
            .remove("alley"),
        ]
        try store.commit(changes)
        store.close()

        let reopened = try SQLiteGeofencingStore(path: path)
        let after = try reopened.load()
        #expect(after.fences.map(\.id) == ["zoo", "park", "beach"])
        #expect(after.fences[1].group == "gardens" && after.fences[1].name == nil && after.fences[1].additionSequence == nil)
        #expect(after.fences[1].feature == #"{"type":"Feature","id":"park","geometry":null}"#)
        reopened.close()

        let db = try Database(path: path)
        #expect(try db.integer("PRAGMA user_version") == Schema.version)
        let sql = try #require(try db.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'fence'"))
        #expect(!sql.uppercased().contains("WITHOUT ROWID"), "\(sql)")
        #expect(try db.text("SELECT name FROM pragma_table_info('fence') ORDER BY cid DESC LIMIT 1") == "feature")
        #expect(try db.integer("SELECT count(*) FROM sqlite_master WHERE name = 'fence_v6'") == 0)
        #expect(try db.text("PRAGMA integrity_check") == "ok")
        db.close()
    }

    @Test("a new store's fence table is the version-6 one, and a duplicate id in one commit keeps one row")
    func freshStore() throws {
        let folder = TemporaryFolder()
        let path = folder.path("fresh.sqlite")
        let store = try SQLiteGeofencingStore(path: path)
        var changes = StoreChanges()
        changes.fences = [
            .upsert(StoredFence(id: "a", position: 1, feature: "first")),
            .upsert(StoredFence(id: "a", position: 1, feature: "second", name: "A")),
        ]
        try store.commit(changes)
        #expect(try store.load().fences == [StoredFence(id: "a", position: 1, feature: "second", name: "A")])
        store.close()
        let db = try Database(path: path)
        #expect(try db.integer("SELECT count(*) FROM fence") == 1)
        #expect(try db.text("SELECT name FROM pragma_table_info('fence') ORDER BY cid DESC LIMIT 1") == "feature")
        db.close()
    }
}
