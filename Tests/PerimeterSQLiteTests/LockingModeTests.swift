import Foundation
import PerimeterEngine
import PerimeterGeometry
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterSQLite

/// The commit path's shortcuts: exclusive locking, values the store remembers between commits, the
/// one-statement counter update. Each must leave what `load()` returns and what survives a crash unchanged.
@Suite("SQLite store: locking mode and the commit path")
struct LockingModeTests {
    static func event(_ sequence: Int64, device: DeviceID = "phone") -> GeofencingEvent {
        GeofencingEvent(sequence: sequence, event: GeofenceEvent(
            id: "e\(sequence)", visitID: "v\(sequence)", kind: .entry, fence: "park", device: device,
            time: Date(timeIntervalSince1970: 1000 + Double(sequence)), coordinate: Coordinate(latitude: 48, longitude: 2)))
    }

    static func device(_ id: DeviceID, time: Double, inside: Bool = false,
                       options: DetectionEngine.DeviceOptionSnapshot? = nil) -> DeviceChange {
        DeviceChange(snapshot: DetectionEngine.DeviceSnapshot(
            device: id, lastTime: time, lastCoordinate: Coordinate(latitude: 48, longitude: 2), updateCount: UInt64(time),
            memberships: inside ? [.init(fence: "park", entryTime: time, visitSequence: 1, hasDwelled: false)] : [],
            options: options), presenceChanged: true)
    }

    /// One commit as the service writes it for `devices` updates: devices, events, all three counters.
    static func changes(devices: [DeviceChange], events: [GeofencingEvent], processed: UInt64) -> StoreChanges {
        var changes = StoreChanges()
        changes.devices = devices
        changes.events = events
        changes.processedUpdates = processed
        changes.acceptedSequence = Int64(processed)
        changes.arrivals = processed
        return changes
    }

    @Test("checkpointPages bounds the write-ahead log: a small bound keeps it small, a large one lets it grow; below 1 is refused")
    func checkpointPagesBoundTheLog() throws {
        let folder = TemporaryFolder()
        var walSizes: [Int: Int] = [:]
        for pages in [2, 10_000] {
            let path = folder.path("state-\(pages).sqlite")
            let store = try SQLiteGeofencingStore(path: path, lockingMode: .exclusive, checkpointPages: pages)
            for k in 1...200 {
                let devices = (0..<8).map { Self.device(DeviceID("d\(k)-\($0)"), time: Double(k)) }
                try store.commit(Self.changes(devices: devices, events: [Self.event(Int64(k))], processed: UInt64(k)))
            }
            walSizes[pages] = ((try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? NSNumber)?.intValue ?? 0
            #expect(try store.load().processedUpdates == 200)
            store.close()
        }
        // Checkpointed every few commits, the log is reused from its start; unbounded, it holds every commit.
        let small = walSizes[2] ?? 0, large = walSizes[10_000] ?? 0
        #expect(small > 0 && large > 10 * small, "log after 200 commits: \(small) bytes with 2 pages, \(large) with 10,000")
        do {
            _ = try SQLiteGeofencingStore(path: folder.path("bad.sqlite"), checkpointPages: 0)
            Issue.record("checkpointPages 0 was accepted")
        } catch {
            #expect(error.code == .invalidArgument && error.message.contains("checkpointPages"))
        }
    }

    @Test("an exclusive store shuts out other stores until it closes, with a clear error, and leaves no -shm file")
    func exclusiveShutsOthersOut() throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: .exclusive)
        try store.commit(Self.changes(devices: [Self.device("phone", time: 1)], events: [Self.event(1)], processed: 1))
        #expect(!FileManager.default.fileExists(atPath: path + "-shm"), "the log's index is in the process's memory")
        for mode in [SQLiteGeofencingStore.LockingMode.shared, .exclusive] {
            do {
                let intruder = try SQLiteGeofencingStore(path: path, lockingMode: mode)
                intruder.close()
                Issue.record("a second \(mode) store opened a file held exclusively")
            } catch {
                #expect(error.code == .storageFailure)
                #expect(error.message.contains("locked") && error.message.contains(path), "\(error.message)")
            }
        }
        // The holder is undisturbed and keeps committing.
        try store.commit(Self.changes(devices: [Self.device("phone", time: 2)], events: [Self.event(2)], processed: 2))
        #expect(try store.load().lastEventSequence == 2)
        store.close()

        let reopened = try SQLiteGeofencingStore(path: path)
        defer { reopened.close() }
        let state = try reopened.load()
        #expect(state.processedUpdates == 2)
        #expect(try reopened.events(after: 0, limit: 10).map(\.sequence) == [1, 2])
    }

    @Test("an exclusive store cannot open a file another store has open, and can once it is closed")
    func exclusiveAfterShared() throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let shared = try SQLiteGeofencingStore(path: path)
        try shared.commit(Self.changes(devices: [Self.device("phone", time: 1)], events: [], processed: 1))
        // An open store in write-ahead-log mode keeps a shared lock on the file: the exclusive store
        // fails fast instead of taking the file from under it.
        do {
            let exclusive = try SQLiteGeofencingStore(path: path, lockingMode: .exclusive)
            exclusive.close()
            Issue.record("an exclusive store opened a file another store has open")
        } catch {
            #expect(error.code == .storageFailure)
            #expect(error.message.contains("locked"), "\(error.message)")
        }
        try shared.commit(Self.changes(devices: [Self.device("phone", time: 2)], events: [], processed: 2))
        shared.close()
        let exclusive = try SQLiteGeofencingStore(path: path, lockingMode: .exclusive)
        #expect(try exclusive.load().processedUpdates == 2)
        exclusive.close()
    }

    @Test("the files as a kill -9 leaves them reopen to every returned commit", arguments: [
        SQLiteGeofencingStore.LockingMode.shared, .exclusive,
    ])
    func crashImage(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        defer { store.close() }
        for step in 1...20 {
            try store.commit(Self.changes(devices: [Self.device(DeviceID("d\(step % 3)"), time: Double(step), inside: step % 2 == 0)],
                                          events: [Self.event(Int64(step), device: DeviceID("d\(step % 3)"))],
                                          processed: UInt64(step)))
        }
        let expected = try store.load()
        // Copy the database and its log while the store still has them open and not yet checkpointed: what a
        // process killed now leaves on disk (the page cache survives a kill -9).
        let image = folder.path("image.sqlite"), fileOnly = folder.path("file-only.sqlite")
        try FileManager.default.copyItem(atPath: path, toPath: image)
        try FileManager.default.copyItem(atPath: path, toPath: fileOnly)
        try FileManager.default.copyItem(atPath: path + "-wal", toPath: image + "-wal")
        let log = try Data(contentsOf: URL(fileURLWithPath: image + "-wal"))
        #expect(log.count > 32, "the commits are in the write-ahead log, not yet in the database file")
        let withoutLog = try SQLiteGeofencingStore(path: fileOnly, lockingMode: mode)
        #expect(try withoutLog.load() != expected, "the database file alone lacks the logged commits")
        withoutLog.close()

        let recovered = try SQLiteGeofencingStore(path: image, lockingMode: mode)
        defer { recovered.close() }
        #expect(try recovered.load() == expected)
        #expect(try recovered.events(after: 0, limit: 100).map(\.sequence) == Array(1...20))
    }

    @Test("the event log must continue without gaps, also when the store remembers its end", arguments: [
        SQLiteGeofencingStore.LockingMode.shared, .exclusive,
    ])
    func sequenceCheck(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let store = try SQLiteGeofencingStore(path: folder.path("state.sqlite"), lockingMode: mode)
        defer { store.close() }
        try store.commit(Self.changes(devices: [Self.device("phone", time: 1)], events: (1...3).map { Self.event($0) }, processed: 1))
        for wrong: Int64 in [5, 3, 1] {
            do {
                try store.commit(Self.changes(devices: [Self.device("phone", time: 2)], events: [Self.event(wrong)], processed: 2))
                Issue.record("event \(wrong) after 3 was accepted")
            } catch let error as GeofencingError {
                #expect(error.code == .storageFailure)
                #expect(error.message.contains("ends at 3"), "\(error.message)")
            }
        }
        // A commit that fails half-way (the second event leaves a gap) is rolled back as a whole, and
        // the remembered end of the log with it.
        #expect(throws: GeofencingError.self) {
            try store.commit(Self.changes(devices: [], events: [Self.event(4), Self.event(6)], processed: 2))
        }
        #expect(try store.load().lastEventSequence == 3)
        try store.commit(Self.changes(devices: [Self.device("phone", time: 2)], events: [Self.event(4)], processed: 2))
        try store.commit(Self.changes(devices: [], events: [Self.event(5)], processed: 3))
        let state = try store.load()
        #expect(state.lastEventSequence == 5)
        #expect(state.processedUpdates == 3 && state.acceptedSequence == 3 && state.arrivals == 3)
    }

    @Test("option rows are deleted when a device's options go away, whatever the store remembers", arguments: [
        SQLiteGeofencingStore.LockingMode.shared, .exclusive,
    ])
    func optionRows(mode: SQLiteGeofencingStore.LockingMode) throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let store = try SQLiteGeofencingStore(path: path, lockingMode: mode)
        let options = DetectionEngine.DeviceOptionSnapshot(pending: [], dwellRepeats: [], anchor: nil, lastSequence: 7)
        // Known empty, then a row, then deleted again; a second device keeps its row throughout.
        try store.commit(Self.changes(devices: [Self.device("a", time: 1)], events: [], processed: 1))
        try store.commit(Self.changes(devices: [Self.device("a", time: 2, options: options)], events: [], processed: 2))
        try store.commit(Self.changes(devices: [Self.device("b", time: 3, options: options)], events: [], processed: 3))
        #expect(try store.load().devices.map { $0.options != nil } == [true, true])
        try store.commit(Self.changes(devices: [Self.device("a", time: 4)], events: [], processed: 4))
        #expect(try store.load().devices.map { $0.options != nil } == [false, true])
        try store.commit(Self.changes(devices: [Self.device("b", time: 5)], events: [], processed: 5))
        #expect(try store.load().devices.map { $0.options != nil } == [false, false])
        store.close()
        let db = try Database(path: path)
        #expect(try db.integer("SELECT count(*) FROM device_option") == 0)
        db.close()
    }

    @Test("counters are written whether a commit changes all of them or only some")
    func counters() throws {
        let folder = TemporaryFolder()
        let store = try SQLiteGeofencingStore(path: folder.path("state.sqlite"), lockingMode: .exclusive)
        defer { store.close() }
        try store.commit(Self.changes(devices: [], events: [], processed: 10))
        var partial = StoreChanges()
        partial.processedUpdates = 11
        partial.serviceConsent = false
        try store.commit(partial)
        let state = try store.load()
        #expect(state.processedUpdates == 11 && state.acceptedSequence == 10 && state.arrivals == 10)
        #expect(state.serviceConsent == false)
    }

    @Test("a closed store refuses commits with a storage failure")
    func closed() throws {
        let folder = TemporaryFolder()
        let store = try SQLiteGeofencingStore(path: folder.path("state.sqlite"), lockingMode: .exclusive)
        store.close()
        do {
            try store.commit(Self.changes(devices: [Self.device("a", time: 1)], events: [], processed: 1))
            Issue.record("a closed store accepted a commit")
        } catch let error as GeofencingError {
            #expect(error.code == .storageFailure)
        }
    }
}
