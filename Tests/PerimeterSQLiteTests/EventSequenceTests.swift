import Foundation
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

/// The event log's sequence is the table's rowid, given by SQLite (the largest plus one) rather than
/// bound: a commit checks before its insert that its first event continues the log, and after each
/// statement that the rows took the events' own sequences.
@Suite("SQLite store: event sequence")
struct EventSequenceTests {
    @Test("a wrongly remembered end of the log is caught, the commit leaves the log as it was, and the next commit goes on",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func wrongEndOfLog(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: mode == .shared ? 18 : 81)
        let folder = TemporaryFolder()
        let store = try SQLiteGeofencingStore(path: folder.path("events.sqlite"), lockingMode: mode)
        defer { store.close() }
        func commit(_ sequences: ClosedRange<Int64>) throws -> [GeofencingEvent] {
            let events = sequences.map { EventLogTests.randomEvent($0, &random) }
            var changes = StoreChanges()
            changes.events = events
            try store.commit(changes)
            return events
        }
        var logged = try commit(1...40)
        // Remembered as ending at 37 (the file ends at 40): events from 38 pass the first check, and
        // SQLite would number them 41…; the check after the statement refuses (32 rows, then 8, then 1).
        for (remembered, count) in [(37, 32), (38, 8), (39, 1)] as [(Int64, Int64)] {
            try store.owner.withConnection("testing") { connection in connection.lastEventSequence = remembered }
            #expect(throws: GeofencingError.self) { _ = try commit(remembered + 1...remembered + count) }
            #expect(try store.events(after: 0, limit: 1000) == logged)
        }
        logged += try commit(41...80)
        logged += try commit(81...81)
        #expect(try store.events(after: 0, limit: 1000) == logged)
        #expect(try store.load().lastEventSequence == 81)
    }
}
