import Foundation
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterSQLite

@Suite("SQLite store: files it must refuse")
struct DatabaseFileTests {
    func expectIncompatible(_ path: String, mentioning text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let before = try? Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try SQLiteGeofencingStore(path: path)
            Issue.record("expected the store to refuse \(path)", sourceLocation: sourceLocation)
        } catch {
            #expect(error.code == .incompatibleStorage, "\(error)", sourceLocation: sourceLocation)
            #expect(error.message.contains(text), "\(error.message)", sourceLocation: sourceLocation)
        }
        let after = try? Data(contentsOf: URL(fileURLWithPath: path))
        #expect(after == before, "the file is left untouched",
                sourceLocation: sourceLocation)
    }

    @Test("a file that is not a database", arguments: [0 as UInt64, 1, 2])
    func notADatabase(seed: UInt64) throws {
        let folder = TemporaryFolder()
        let path = folder.path("junk.sqlite")
        var rng = SplitMix64(seed: seed)
        let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &rng) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        expectIncompatible(path, mentioning: "not an SQLite database")
    }

    @Test("another application's database")
    func foreign() throws {
        let folder = TemporaryFolder()
        let path = folder.path("other.sqlite")
        let db = try Database(path: path)
        try db.execute("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x');")
        db.close()
        expectIncompatible(path, mentioning: "another application")
    }

    @Test("a newer schema")
    func newer() throws {
        let folder = TemporaryFolder()
        let path = folder.path("new.sqlite")
        try SQLiteGeofencingStore(path: path).close()
        let db = try Database(path: path)
        try db.execute("PRAGMA user_version = 99")
        db.close()
        expectIncompatible(path, mentioning: "schema version 99")
    }

    @Test("a damaged page")
    func damaged() throws {
        let folder = TemporaryFolder()
        let path = folder.path("damaged.sqlite")
        do {
            let store = try SQLiteGeofencingStore(path: path)
            var changes = StoreChanges()
            changes.fences = (0..<400).map {
                .upsert(StoredFence(id: .init("fence-\($0)"), position: Int64($0), feature: String(repeating: "x", count: 300)))
            }
            try store.commit(changes)
            store.close()  // checkpoints the WAL into the main file
        }
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(data.count > 8 * 4096)
        for i in (3 * 4096)..<(3 * 4096 + 2000) { data[i] = 0xA5 }
        try data.write(to: URL(fileURLWithPath: path))
        expectIncompatible(path, mentioning: "damaged")
    }

    @Test("an unopenable path is a storage failure that names it")
    func unopenable() {
        do {
            _ = try SQLiteGeofencingStore(path: "/nonexistent-folder/x.sqlite")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .storageFailure)
            #expect(error.message.contains("/nonexistent-folder/x.sqlite"))
        }
    }

    @Test("a new store is a Perimeter database in WAL mode with the current schema")
    func fresh() throws {
        let folder = TemporaryFolder()
        let path = folder.path("fresh.sqlite")
        try SQLiteGeofencingStore(path: path).close()
        let db = try Database(path: path)
        #expect(try db.integer("PRAGMA application_id") == Schema.applicationID)
        #expect(try db.integer("PRAGMA user_version") == Schema.version)
        #expect(try db.text("PRAGMA journal_mode") == "wal")
        db.close()
        try SQLiteGeofencingStore(path: path).close()  // reopening works
    }

    @Test("a failing transaction rolls back and the statement cache survives")
    func rollback() throws {
        let folder = TemporaryFolder()
        let db = try Database(path: folder.path("t.sqlite"))
        try db.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
        #expect(throws: DatabaseError.self) {
            try db.inTransaction {
                let insert = try db.statement("INSERT INTO t VALUES (?)")
                insert.bind(Int64(1), at: 1)
                try insert.execute()
                insert.bind(Int64(1), at: 1)
                try insert.execute()  // constraint violation
            }
        }
        #expect(try db.integer("SELECT count(*) FROM t") == 0)
        do {
            try db.execute("INSERT INTO t VALUES (1); INSERT INTO t VALUES (1);")
        } catch {
            #expect(error.resultCode.primary == .constraint)
            #expect(error.description.contains("UNIQUE"))
        }
        db.close()
        #expect(throws: DatabaseError.self) { try db.execute("SELECT 1") }
    }
}
