import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import Testing

/// `commitSnapshot(of:since:)` against `snapshot(of:)`: the same state, and memberships left out exactly
/// when they are those the stamp was taken with.
@Suite("Commit snapshots equal snapshots, and stamps tell unchanged presence")
struct CommitSnapshotTests {
    /// Runs random batches through `engines` (each a way to take snapshots of one engine) and, after
    /// each batch, checks every device's commit snapshot against its full snapshot and against the
    /// memberships recorded with its stamp.
    static func check(seed: UInt64, options: DetectionOptions = DetectionOptions(),
                      configuration: DetectionEngine.Configuration, shards: Int) {
        let fences = DataClockBatchTests.fences(seed: seed, options: options)
        var engine = ShardedEngine(fences: fences, configuration: configuration, shards: shards)
        var stamps: [DeviceID: (DetectionEngine.PresenceStamp, [DetectionEngine.MembershipSnapshot])] = [:]
        var unchanged = 0, changed = 0
        for batch in DataClockBatchTests.batches(seed: seed, devices: 40, batches: 40) {
            _ = batch.updates.withUnsafeBufferPointer { engine.processOnDataClock($0, clockOnly: batch.clockOnly) }
            for full in engine.deviceSnapshots {
                let previous = stamps[full.device]
                guard let taken = engine.commitSnapshot(of: full.device, since: previous?.0) else {
                    Issue.record("no commit snapshot of \(full.device)")
                    continue
                }
                var snapshot = taken.snapshot
                if taken.presenceUnchanged {
                    unchanged += 1
                    #expect(snapshot.memberships.isEmpty)
                    #expect(previous?.1 == full.memberships, "a stamp said \(full.device)'s presence was unchanged")
                    snapshot.memberships = full.memberships
                } else {
                    changed += 1
                    if let previous { #expect(previous.1 != full.memberships, "a stamp said \(full.device)'s presence changed") }
                }
                #expect(snapshot == full)
                stamps[full.device] = (taken.stamp, full.memberships)
            }
        }
        #expect(unchanged > 0 && changed > 0, "both cases occur (\(unchanged) unchanged, \(changed) changed)")
        #expect(engine.commitSnapshot(of: "nobody", since: nil) == nil)
    }

    @Test("default semantics with dwells: one and three shards", arguments: [1, 3])
    func defaultSemantics(shards: Int) {
        Self.check(seed: 51, configuration: .init(defaultDwellTime: 15), shards: shards)
    }

    @Test("detection options and stream options: one and two shards", arguments: [1, 2])
    func options(shards: Int) {
        let options = DetectionOptions(entryDelay: 4, exitDelay: 3, dwellEvery: 30, staleAfter: 40, exitOnStale: true)
        Self.check(seed: 52, options: options, configuration: .init(defaultDwellTime: 20, reorderWindow: 5, deduplicate: true), shards: shards)
    }

    @Test("a dwell falling due changes the presence a stamp holds")
    func dwellChangesStamp() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, size: 2, dwell: 10)])
        var events: [GeofenceEvent] = []
        _ = engine.process(update("d", 0, 1, 1), into: &events)
        let first = engine.commitSnapshot(of: "d", since: nil)!
        #expect(!first.presenceUnchanged && first.snapshot.memberships.map(\.hasDwelled) == [false])
        _ = engine.process(update("d", 5, 1, 1), into: &events)
        let second = engine.commitSnapshot(of: "d", since: first.stamp)!
        #expect(second.presenceUnchanged && second.snapshot.updateCount == 2 && second.snapshot.lastTime == 5)
        _ = engine.process(update("d", 20, 1, 1), into: &events)
        let third = engine.commitSnapshot(of: "d", since: second.stamp)!
        #expect(!third.presenceUnchanged && third.snapshot.memberships.map(\.hasDwelled) == [true])
    }
}
