import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import PerimeterTestSupport
import Testing
@testable import PerimeterSQLite

@Suite("SQLite store: write-ahead log checkpoints in the background")
struct CheckpointTests {
    /// Many small commits with a low threshold and limit: the background checkpointer runs, the log
    /// stays bounded (without the writer's RESTART it would hold every frame: passive checkpoints
    /// under steady writes never let it start over), and everything committed reads back.
    @Test func logStaysBoundedAndEverythingReadsBack() throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let threshold = 40, limit = 300
        let store = try SQLiteGeofencingStore(path: path, checkpointer: WALCheckpointer(path: path, threshold: threshold, limit: limit))
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())
        try service.addFeature(GeoJSON.Feature(id: .string("zone"),
                                               geometry: .point(GeoJSON.Point(GeoJSON.Position(longitude: 0, latitude: 0))),
                                               properties: ["perimeter:radius": .double(1_000)]))
        let calls = 2_000
        var events = 0
        var largestLog: UInt64 = 0
        for k in 0..<calls {
            // 50 devices, each alternating inside and far away: every call commits a device row and an event.
            let inside = (k / 50) % 2 == 0
            let update = LocationUpdate(device: DeviceID("device-\(k % 50)"), time: Date(timeIntervalSince1970: Double(k)),
                                        latitude: inside ? 0 : 1, longitude: 0)
            events += try service.process(update).count
            largestLog = max(largestLog, Self.fileSize(path + "-wal"))
        }
        #expect(events == calls)
        // A commit here writes a handful of pages; the log never holds much more than `limit` frames.
        let frame = UInt64(24 + 4096)
        #expect(largestLog <= 32 + UInt64(limit + 50) * frame, "largest log: \(largestLog / frame) frames")
        #expect(largestLog > 32 + UInt64(threshold) * frame, "the log grew past the threshold (\(largestLog / frame) frames)")
        // The background thread ran (give it a moment if the last request is still being served).
        var status = store.checkpointer.status
        for _ in 0..<100 where status.checkpoints == 0 {
            usleep(20_000)
            status = store.checkpointer.status
        }
        #expect(status.checkpoints > 0)
        #expect(status.lastFailure == nil)
        try service.close()
        store.close()

        let reopened = try SQLiteGeofencingStore(path: path)
        let state = try reopened.load()
        #expect(state.processedUpdates == UInt64(calls))
        #expect(state.lastEventSequence == Int64(calls))
        #expect(try reopened.events(after: 0, limit: calls + 1).map(\.sequence) == Array(1...Int64(calls)))
        reopened.close()
    }

    /// Closing stops the checkpoint thread; a store released without `close` stops it too.
    @Test func closingStopsTheThread() throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        let checkpointer = WALCheckpointer(path: path, threshold: 1, limit: 10)
        do {
            let store = try SQLiteGeofencingStore(path: path, checkpointer: checkpointer)
            var changes = StoreChanges()
            changes.processedUpdates = 1
            try store.commit(changes)
            store.close()
            #expect(checkpointer.isRunning == false)
        }
        let other = WALCheckpointer(path: folder.path("other.sqlite"))
        do {
            _ = try SQLiteGeofencingStore(path: folder.path("other.sqlite"), checkpointer: other)
        }
        #expect(other.isRunning == false)
    }

    static func fileSize(_ path: String) -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.uint64Value ?? 0
    }
}
