import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// `writeCommitSnapshot(of:handle:since:into:)` against `snapshot(of:)` and `commitSnapshot(of:since:)`:
/// the same state written over a placeholder whose every field differs, the memberships left as they
/// were exactly when the returned snapshot leaves them out, the same stamp; a stale handle corrected.
@Suite("Commit snapshots written in place equal those returned")
struct CommitSnapshotInPlaceTests {
    /// A snapshot none of whose fields is any device's (so that a field left unwritten shows): option and
    /// stream state too, which an engine without options must clear (`nil`), and one with them replace.
    static func placeholder() -> DetectionEngine.DeviceSnapshot {
        DetectionEngine.DeviceSnapshot(
            device: "placeholder", lastTime: -1, lastCoordinate: Coordinate(latitude: -89, longitude: -179), updateCount: 999_999,
            memberships: [.init(fence: "sentinel", entryTime: -1, visitSequence: 7, hasDwelled: true)],
            instantVisits: [.init(fence: "sentinel", entryTime: -1, ordinal: 3)],
            options: .init(lastSequence: -7), stream: .init(newest: -7))
    }

    static func check(seed: UInt64, options: DetectionOptions = DetectionOptions(),
                      configuration: DetectionEngine.Configuration, shards: Int) {
        let fences = DataClockBatchTests.fences(seed: seed, options: options)
        var engine = ShardedEngine(fences: fences, configuration: configuration, shards: shards)
        var stamps: [DeviceID: DetectionEngine.PresenceStamp] = [:]
        var handles: [DeviceID: DeviceHandle] = [:]
        var rng = SplitMix64(seed: seed &* 31)
        var unchanged = 0, changed = 0, staleHandles = 0
        for batch in DataClockBatchTests.batches(seed: seed, devices: 40, batches: 40) {
            _ = batch.updates.withUnsafeBufferPointer { engine.processOnDataClock($0, clockOnly: batch.clockOnly) }
            for full in engine.deviceSnapshots {
                let stamp = stamps[full.device]
                guard let returned = engine.commitSnapshot(of: full.device, since: stamp) else {
                    Issue.record("no commit snapshot of \(full.device)")
                    continue
                }
                // Now and then a handle that names another slot: it must be corrected, never followed.
                var handle = handles[full.device] ?? DeviceHandle()
                if Int.random(in: 0..<6, using: &rng) == 0 {
                    handle = DeviceHandle(slot: Int32.random(in: 0..<50, using: &rng))
                    staleHandles += 1
                }
                var written = Self.placeholder()
                guard let result = engine.writeCommitSnapshot(of: full.device, handle: &handle, since: stamp, into: &written) else {
                    Issue.record("nothing written for \(full.device)")
                    continue
                }
                // Against the full snapshot, which takes none of the commit snapshot's code (both forms
                // of the commit snapshot share one body, so comparing them alone would not catch a
                // mistake in it). When the presence is unchanged, the memberships are the placeholder's.
                var whole = written
                if result.presenceUnchanged { whole.memberships = full.memberships }
                #expect(whole == full, "the state written for \(full.device) is its snapshot")
                #expect(result.presenceUnchanged == returned.presenceUnchanged)
                #expect(result.stamp.inside == returned.stamp.inside)
                if returned.presenceUnchanged {
                    unchanged += 1
                    #expect(written.memberships == Self.placeholder().memberships, "memberships left as they were")
                    written.memberships = returned.snapshot.memberships
                } else {
                    changed += 1
                }
                #expect(written == returned.snapshot)
                #expect(written.device == full.device)
                // The handle now names the device: the next call finds it without the id.
                #expect(handle.isResolved)
                stamps[full.device] = result.stamp
                handles[full.device] = handle
            }
        }
        #expect(unchanged > 0 && changed > 0 && staleHandles > 0,
                "every case occurs (\(unchanged) unchanged, \(changed) changed, \(staleHandles) stale handles)")
        var handle = DeviceHandle(), written = Self.placeholder()
        #expect(engine.writeCommitSnapshot(of: "nobody", handle: &handle, since: nil, into: &written) == nil)
        #expect(written == Self.placeholder() && !handle.isResolved)
    }

    @Test("default semantics with dwells: one and three shards", arguments: [1, 3])
    func defaultSemantics(shards: Int) {
        Self.check(seed: 61, configuration: .init(defaultDwellTime: 15), shards: shards)
    }

    @Test("detection options and stream options: one and two shards", arguments: [1, 2])
    func options(shards: Int) {
        let options = DetectionOptions(entryDelay: 4, exitDelay: 3, dwellEvery: 30, staleAfter: 40, exitOnStale: true)
        Self.check(seed: 62, options: options, configuration: .init(defaultDwellTime: 20, reorderWindow: 5, deduplicate: true), shards: shards)
    }
}
