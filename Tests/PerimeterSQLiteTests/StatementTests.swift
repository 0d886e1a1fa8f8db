import Foundation
import PerimeterSQLite
import PerimeterTestSupport
import Testing

/// The public database layer as another module's store uses it (a plain import, no `@testable`).
@Suite("Statement: bindings and columns of the public database layer")
struct StatementTests {
    @Test("every bound type reads back equal, nil binds NULL, and a STRICT column stores the declared type")
    func bindingsRoundTrip() throws {
        let folder = TemporaryFolder()
        let db = try Database(path: folder.path("values.sqlite"))
        defer { db.close() }
        try db.execute("CREATE TABLE value (i INTEGER, r REAL, t TEXT, flag INTEGER, at REAL) STRICT")
        let insert = try db.statement("INSERT INTO value VALUES (?1, ?2, ?3, ?4, ?5)")
        let time = Date(timeIntervalSince1970: 1_700_000_000.125)
        insert.bind(Int64(-7), at: 1)
        insert.bind(2.5, at: 2)
        insert.bind("añb", at: 3)
        insert.bind(true, at: 4)
        insert.bind(time, at: 5)
        try insert.execute()
        insert.bind(nil as Int64?, at: 1)
        insert.bind(nil as Double?, at: 2)
        insert.bind(nil as String?, at: 3)
        insert.bind(nil as Bool?, at: 4)
        insert.bind(nil as Date?, at: 5)
        try insert.execute()

        let select = try db.statement("SELECT i, r, t, flag, at, typeof(flag), typeof(at) FROM value ORDER BY rowid")
        #expect(try select.step())
        #expect(select.int64(0) == -7 && select.double(1) == 2.5 && select.string(2) == "añb")
        #expect(select.bool(3) && select.date(4) == time && select.optionalDate(4) == time)
        #expect(select.string(5) == "integer" && select.string(6) == "real")
        #expect(try select.step())
        #expect((0..<5).allSatisfy { select.isNull($0) })
        #expect(select.optionalString(2) == nil && select.optionalDouble(1) == nil && select.optionalDate(4) == nil)
        #expect(!select.bool(3))
        #expect(try !select.step())
    }

    @Test("inTransaction commits what returns and rolls back what throws; errors name the SQL and the file")
    func transactionsAndErrors() throws {
        struct Refusal: Error {}
        let folder = TemporaryFolder()
        let db = try Database(path: folder.path("t.sqlite"))
        defer { db.close() }
        try db.execute("CREATE TABLE t (x INTEGER NOT NULL CHECK (x > 0))")
        try db.inTransaction { try db.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: Refusal.self) {
            try db.inTransaction {
                try db.execute("INSERT INTO t VALUES (2)")
                throw Refusal()
            }
        }
        #expect(try db.integer("SELECT sum(x) FROM t") == 1)
        do {
            try db.execute("INSERT INTO t VALUES (-1)")
            Issue.record("the CHECK constraint let -1 in")
        } catch {
            #expect(error.resultCode.primary == .constraint)
            #expect(error.sql == "INSERT INTO t VALUES (-1)")
            #expect(error.path == db.path)
        }
    }
}
