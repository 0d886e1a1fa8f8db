import Foundation
import PerimeterEngine
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

/// The write-ahead log gathers SQLite's writes and writes them out at the end of each commit frame, and
/// the automatic checkpoint gathers its writes to the database file (CSQLite's shim): what a `kill -9`
/// leaves right after `commit` returns must hold that commit, and a checkpoint's pages must be in the
/// database file when it is done.
@Suite("SQLite store: the write-ahead log's gathered writes")
struct WriteAheadLogGatheringTests {
    @Test("a copy of the files taken right after each commit returns reopens to that commit (commits of a few frames to several buffers' worth; checkpoints now and then)",
          arguments: [(SQLiteGeofencingStore.LockingMode.shared, 1_000), (.shared, 40), (.exclusive, 1_000), (.exclusive, 40)])
    func everyCommitIsInTheFile(mode: SQLiteGeofencingStore.LockingMode, checkpointPages: Int) throws {
        var random = SplitMix64(seed: UInt64(checkpointPages) + (mode == .shared ? 0 : 7))
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode, checkpointPages: checkpointPages)
        defer { store.close() }
        let memory = InMemoryGeofencingStore()
        let ids = (0..<300).map { DeviceID("device-\($0)") }
        var sequence: Int64 = 0
        for step in 1...24 {
            var changes = StoreChanges()
            // 1–300 device rows and 0–399 events: from one or two pages of the log to well over the
            // 64 KiB it gathers at once.
            changes.devices = ids.shuffled(using: &random).prefix(Int(random.next() % 300) + 1).map {
                DeviceChange(snapshot: DeviceRowTests.randomSnapshot($0, &random), presenceChanged: true)
            }
            changes.events = (0..<Int(random.next() % 400)).map { _ in
                sequence += 1
                return LockingModeTests.event(sequence, device: ids[Int(random.next() % 300)])
            }
            changes.processedUpdates = UInt64(step)
            try store.commit(changes)
            try memory.commit(changes)
            // Nothing read from the store in between: a read of the log would write out what it gathered.
            let image = folder.path("image-\(step).sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: image)
            if FileManager.default.fileExists(atPath: path + "-wal") {
                try FileManager.default.copyItem(atPath: path + "-wal", toPath: image + "-wal")
            }
            let copy = try SQLiteGeofencingStore(path: image, lockingMode: .exclusive)
            let state = try copy.load(), expected = try memory.load()
            #expect(state.processedUpdates == UInt64(step), "step \(step)")
            #expect(state.devices == expected.devices, "step \(step)")
            #expect(try copy.events(after: 0, limit: 10_000) == memory.events(after: 0, limit: 10_000), "step \(step)")
            copy.close()
        }
    }

    @Test("with a checkpoint after every commit, the database file alone (no log) holds each commit once it returns",
          arguments: [SQLiteGeofencingStore.LockingMode.shared, .exclusive])
    func checkpointedPagesAreInTheFile(mode: SQLiteGeofencingStore.LockingMode) throws {
        var random = SplitMix64(seed: mode == .shared ? 17 : 71)
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        // One page: every commit's checkpoint copies the whole log into the file (no reader holds it back).
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode, checkpointPages: 1)
        defer { store.close() }
        let memory = InMemoryGeofencingStore()
        let ids = (0..<300).map { DeviceID("device-\($0)") }
        for step in 1...12 {
            var changes = StoreChanges()
            changes.devices = ids.shuffled(using: &random).prefix(Int(random.next() % 300) + 1).map {
                DeviceChange(snapshot: DeviceRowTests.randomSnapshot($0, &random), presenceChanged: true)
            }
            changes.processedUpdates = UInt64(step)
            try store.commit(changes)
            try memory.commit(changes)
            let image = folder.path("file-only-\(step).sqlite")
            try FileManager.default.copyItem(atPath: path, toPath: image)
            let copy = try SQLiteGeofencingStore(path: image, lockingMode: .exclusive)
            let state = try copy.load()
            #expect(state.processedUpdates == UInt64(step), "step \(step)")
            #expect(try state.devices == memory.load().devices, "step \(step)")
            copy.close()
        }
    }
}
