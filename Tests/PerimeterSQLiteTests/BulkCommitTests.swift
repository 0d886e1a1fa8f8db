import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

/// Bulk commits (``SQLiteGeofencingStore/bulkCommitBytes`` of fence text or more, a fence import): in an
/// exclusive store they run under a rollback journal and go back to write-ahead logging; whatever the
/// path, the store reads back and survives reopening exactly as with an ordinary commit.
@Suite("SQLite store: bulk commits")
struct BulkCommitTests {
    /// `count` polygon features of about `bytes` bytes of text each (a ring of many vertices).
    static func fences(_ count: Int, bytes: Int, from start: Int = 0) -> [StoredFence] {
        (start..<(start + count)).map { k in
            let vertices = max(4, bytes / 26)
            var ring: [String] = []
            for v in 0..<vertices {
                let angle = 2 * Double.pi * Double(v) / Double(vertices)
                ring.append("[\(2 + 0.01 * Double(k) + 0.001 * cos(angle)),\(48 + 0.001 * sin(angle))]")
            }
            ring.append(ring[0])
            let text = #"{"type":"Feature","id":"f\#(k)","geometry":{"type":"Polygon","coordinates":[[\#(ring.joined(separator: ","))]]},"properties":{"perimeter:group":"bulk"}}"#
            return StoredFence(id: FenceID("f\(k)"), position: Int64(k + 1), feature: text, group: "bulk", name: nil,
                               dwellTime: nil, expiresAt: nil, additionSequence: nil)
        }
    }

    static func fenceChanges(_ fences: [StoredFence]) -> StoreChanges {
        var changes = StoreChanges()
        changes.fences = fences.map { .upsert($0) }
        return changes
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The connection's journal mode and `synchronous` (1 NORMAL, 2 FULL), as SQLite reports them.
    static func journal(of store: SQLiteGeofencingStore) throws -> (mode: String, synchronous: Int64) {
        try store.owner.withConnection("inspecting") { connection in
            (try connection.db.text("PRAGMA journal_mode") ?? "", try connection.db.integer("PRAGMA synchronous") ?? -1)
        }
    }

    @Test("a bulk commit reads back and reopens like an ordinary one; an exclusive store writes it to the file, not the log, and returns to write-ahead logging",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func bulkCommit(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode, checkpointPages: 10_000)
        try store.commit(LockingModeTests.changes(devices: [LockingModeTests.device("phone", time: 1)],
                                                  events: [LockingModeTests.event(1)], processed: 1))
        let fences = Self.fences(60, bytes: 100_000)
        let bulk = Self.fenceChanges(fences)
        #expect(SQLiteGeofencingStore.fenceTextBytes(bulk) >= SQLiteGeofencingStore.bulkCommitBytes)
        try store.commit(bulk)

        let journal = try Self.journal(of: store)
        #expect(journal.mode == "wal" && journal.synchronous == 1, "back in write-ahead logging, synchronous NORMAL: \(journal)")
        #expect(!FileManager.default.fileExists(atPath: path + "-journal"))
        let log = Self.fileSize(path + "-wal")
        if mode == .exclusive {
            #expect(log < 1 << 20, "the fences went to the database file, not the log (\(log) bytes of log)")
        } else {
            #expect(log > 4 << 20, "a shared store writes them through the log (\(log) bytes of log)")
        }
        // Ordinary commits follow through the log.
        try store.commit(LockingModeTests.changes(devices: [LockingModeTests.device("phone", time: 2)],
                                                  events: [LockingModeTests.event(2)], processed: 2))
        let expected = try store.load()
        #expect(expected.fences == fences)
        #expect(expected.processedUpdates == 2 && expected.lastEventSequence == 2)

        // What a kill -9 now would leave: the files as they are.
        let image = folder.path("image.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: image)
        if FileManager.default.fileExists(atPath: path + "-wal") {
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: image + "-wal")
        }
        store.close()
        for file in [image, path] {
            let reopened = try SQLiteGeofencingStore(path: file, lockingMode: mode)
            #expect(try reopened.load() == expected)
            reopened.close()
        }
    }

    @Test("a bulk commit that fails halfway changes nothing, and the store goes on in write-ahead logging",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func failedBulkCommit(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        let first = Self.fences(3, bytes: 2_000)
        try store.commit(Self.fenceChanges(first))
        let before = try store.load()

        // The fences are written first; the event after them does not continue the log: the whole
        // transaction rolls back.
        var failing = Self.fenceChanges(Self.fences(60, bytes: 100_000, from: 3))
        failing.events = [LockingModeTests.event(7)]
        do {
            try store.commit(failing)
            Issue.record("a commit whose event leaves a gap in the log was accepted")
        } catch {
            #expect("\(error)".contains("does not continue"), "\(error)")
        }
        #expect(try store.load() == before)
        let journal = try Self.journal(of: store)
        #expect(journal.mode == "wal" && journal.synchronous == 1, "\(journal)")

        failing.events = []
        try store.commit(failing)
        let after = try store.load()
        #expect(after.fences.count == 63)
        store.close()
        let reopened = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        defer { reopened.close() }
        #expect(try reopened.load() == after)
    }

    @Test("an exclusive store with synchronous FULL keeps it after a bulk commit")
    func fullStaysFull() throws {
        let folder = TemporaryFolder()
        let store = try SQLiteGeofencingStore(path: folder.path("state.sqlite"), synchronous: .full, lockingMode: .exclusive)
        defer { store.close() }
        try store.commit(Self.fenceChanges(Self.fences(50, bytes: 100_000)))
        let journal = try Self.journal(of: store)
        #expect(journal.mode == "wal" && journal.synchronous == 2, "\(journal)")
        #expect(try store.load().fences.count == 50)
    }
}
