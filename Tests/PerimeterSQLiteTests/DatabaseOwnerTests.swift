import Foundation
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterSQLite

@Suite("DatabaseOwner: the one connection owner of both stores")
struct DatabaseOwnerTests {
    struct Refusal: Error {}

    func owner(in folder: TemporaryFolder) throws -> DatabaseOwner<Database> {
        try DatabaseOwner(path: folder.path("owned.sqlite"), description: "the test database", prepare: { (db) throws(GeofencingError) in
            do { try db.execute("CREATE TABLE IF NOT EXISTS item (value INTEGER NOT NULL)") } catch {
                throw GeofencingError(.storageFailure, "\(error)")
            }
        }, wrap: { $0 })
    }

    func count(_ owner: DatabaseOwner<Database>) throws -> Int64 {
        try owner.withConnection("counting") { try $0.integer("SELECT count(*) FROM item") ?? -1 }
    }

    @Test("a transaction that throws leaves nothing behind; one that returns is committed")
    func rollsBackOnError() throws {
        let folder = TemporaryFolder()
        let owner = try owner(in: folder)
        #expect(throws: Refusal.self) {
            try owner.inTransaction("adding") { db in
                try db.execute("INSERT INTO item VALUES (1)")
                throw Refusal()
            }
        }
        #expect(try count(owner) == 0)
        try owner.inTransaction("adding") { db in try db.execute("INSERT INTO item VALUES (2)") }
        #expect(try count(owner) == 1)
        owner.close()
    }

    @Test("database errors become a GeofencingError naming the action and the file")
    func mapsDatabaseErrors() throws {
        let folder = TemporaryFolder()
        let owner = try owner(in: folder)
        do {
            try owner.withConnection("reading") { db in try db.execute("SELECT * FROM missing") }
            Issue.record("expected the statement to fail")
        } catch let error as GeofencingError {
            #expect(error.code == .storageFailure)
            #expect(error.message.contains("reading") && error.message.contains("owned.sqlite"), "\(error.message)")
        }
        owner.close()
        #expect(throws: GeofencingError.self) { try count(owner) }
    }

    @Test("a file that cannot be opened is reported with the owner's description")
    func unopenable() {
        do {
            _ = try DatabaseOwner(path: "/nonexistent-folder/x.sqlite", description: "the test database",
                                  prepare: { (_: Database) throws(GeofencingError) in }, wrap: { $0 })
            Issue.record("expected the open to fail")
        } catch {
            #expect(error.code == .storageFailure)
            #expect(error.message.contains("cannot open the test database /nonexistent-folder/x.sqlite"), "\(error.message)")
        }
    }
}
