import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// Snapshots with detection options: an engine rebuilt from snapshots at random points emits exactly
/// the events of an uninterrupted engine, for every option that keeps state.
@Suite("Snapshot and restore with options")
struct SnapshotRestoreTests {
    /// A named option set: per-fence options, the engine configuration, and how the stream is disturbed.
    struct Setup: Sendable, CustomStringConvertible {
        var description: String
        var fenceOptions: DetectionOptions
        var configuration: DetectionEngine.Configuration
        var shuffleWithin: Double = 0
        var repeats = false

        static let all: [Setup] = [
            Setup(description: "debounce", fenceOptions: .init(entryDelay: 15, exitDelay: 10),
                  configuration: .init(defaultDwellTime: 12)),
            Setup(description: "dwell every + staleness", fenceOptions: .init(dwellEvery: 7, staleAfter: 25, exitOnStale: true),
                  configuration: .init(defaultDwellTime: 5)),
            Setup(description: "crossings + interpolation", fenceOptions: .init(crossings: true, interpolate: true, maximumGap: 40),
                  configuration: .init(defaultDwellTime: 9)),
            Setup(description: "initial trigger inside", fenceOptions: .init(initialTrigger: .inside),
                  configuration: .init(defaultDwellTime: 9)),
            Setup(description: "reorder window", fenceOptions: .init(),
                  configuration: .init(defaultDwellTime: 9, reorderWindow: 20), shuffleWithin: 20),
            Setup(description: "duplicates", fenceOptions: .init(initialTrigger: .inside, dwellEvery: 6),
                  configuration: .init(defaultDwellTime: 9, deduplicate: true), repeats: true),
            Setup(description: "schedule",
                  fenceOptions: .init(schedule: try? FenceSchedule.parse("Thu 00:03-00:08 UTC+00:00").get()),
                  configuration: .init(defaultDwellTime: 40)),
            Setup(description: "everything",
                  fenceOptions: .init(entryDelay: 6, exitDelay: 4, crossings: true, initialTrigger: .inside, dwellEvery: 5,
                                      staleAfter: 30, exitOnStale: true),
                  configuration: .init(defaultDwellTime: 8, reorderWindow: 12, deduplicate: true),
                  shuffleWithin: 12, repeats: true),
        ]
    }

    static func fences(_ random: inout SplitMix64, options: DetectionOptions) -> [Fence] {
        (0..<7).map { i in
            with(square(FenceID("f\(i)"), lat: Double(Int.random(in: 0...6, using: &random)),
                        lon: Double(Int.random(in: 0...6, using: &random)), size: Double(Int.random(in: 1...3, using: &random)),
                        dwell: Bool.random(using: &random) ? Double(Int.random(in: 0...30, using: &random)) : nil),
                 options)
        }
    }

    /// Time-ordered random walks of three devices, then disturbed as the setup says.
    static func stream(_ random: inout SplitMix64, setup: Setup) -> [LocationUpdate] {
        var clock: [DeviceID: Double] = [:]
        let devices: [DeviceID] = ["p", "q", "r"]
        var updates = (0..<260).map { _ in
            let device = devices.randomElement(using: &random)!
            let t = (clock[device] ?? 0) + Double(Int.random(in: 1...12, using: &random))
            clock[device] = t
            return update(device, t, Double(Int.random(in: -2...20, using: &random)) / 2,
                          Double(Int.random(in: -2...20, using: &random)) / 2)
        }
        updates.sort { $0.time < $1.time }
        if setup.shuffleWithin > 0 {
            let arrival = updates.map { $0.time.timeIntervalSince1970 + Double.random(in: 0..<setup.shuffleWithin, using: &random) }
            updates = updates.indices.sorted { (arrival[$0], $0) < (arrival[$1], $1) }.map { updates[$0] }
        }
        if setup.repeats {
            updates = updates.flatMap { u in Array(repeating: u, count: Int.random(in: 1...2, using: &random)) }
            updates += updates.prefix(15)  // a re-upload of the start
        }
        return updates
    }

    /// Drives `updates` like the service: advance the clock to each update when something is due, then
    /// process it; at `restarts` the engine is rebuilt from its snapshots. A fence is added at `addAt`.
    static func run(_ updates: [LocationUpdate], fences: [Fence], extra: Fence, addAt: Int,
                    configuration: DetectionEngine.Configuration, restarts: Set<Int>) throws -> [GeofenceEvent] {
        var engine = DetectionEngine(fences: fences, configuration: configuration)
        var events: [GeofenceEvent] = []
        for (index, u) in updates.enumerated() {
            if restarts.contains(index) {
                let snapshots = engine.deviceSnapshots
                var fresh = DetectionEngine(fences: engine.fenceSet.fences, configuration: configuration)
                try fresh.restore(snapshots, engineState: engine.engineState)
                #expect(fresh.deviceSnapshots == snapshots, "a restored engine snapshots as the original")
                engine = fresh
            }
            if index == addAt { engine.upsert(extra) }
            let due = engine.devicesWithDwellsDue(by: u.time)
            if due.isEmpty {
                // Brute force: advancing now would change nothing.
                var probe = engine
                let before = probe.deviceSnapshots
                #expect(probe.advance(to: u.time).isEmpty)
                #expect(probe.deviceSnapshots == before)
            } else {
                engine.advance(to: u.time, into: &events)
            }
            engine.process(u, into: &events)
        }
        engine.advance(to: Date(timeIntervalSince1970: 100_000), into: &events)
        return events
    }

    @Test("restarts at random points give the events of an uninterrupted run",
          arguments: Setup.all, [1, 2, 3] as [UInt64])
    func restartEquivalence(setup: Setup, seed: UInt64) throws {
        #expect(!setup.fenceOptions.isOff || setup.configuration.reorderWindow > 0, "the setup turns something on")
        var random = SplitMix64(seed: seed)
        let fences = Self.fences(&random, options: setup.fenceOptions)
        let extra = with(square("late", lat: 2, lon: 2, size: 4, dwell: 10), setup.fenceOptions)
        let updates = Self.stream(&random, setup: setup)
        let addAt = updates.count / 3
        let expected = try Self.run(updates, fences: fences, extra: extra, addAt: addAt,
                                    configuration: setup.configuration, restarts: [])
        #expect(expected.count > 20)
        let restarts = Set((0..<25).map { _ in Int.random(in: 1..<updates.count, using: &random) })
        let actual = try Self.run(updates, fences: fences, extra: extra, addAt: addAt,
                                  configuration: setup.configuration, restarts: restarts)
        #expect(actual == expected)
    }

    @Test("option state is in the snapshot: pending transitions, repeats, last fix, buffer, recent updates")
    func snapshotContents() throws {
        let fence = with(square("a", lat: 0, lon: 0, size: 1, dwell: 5), .init(entryDelay: 30, dwellEvery: 10))
        var engine = DetectionEngine(fences: [fence], configuration: .init(reorderWindow: 10, deduplicate: true))
        _ = engine.process(update(0, 0.5, 0.5))
        _ = engine.process(update(20, 0.5, 0.6))  // releases t = 0: a pending entry
        let snapshot = try #require(engine.snapshot(of: "d"))
        let options = try #require(snapshot.options)
        #expect(options.pending.map(\.fence) == ["a"])
        #expect(options.pending.first?.since == 0)
        #expect(options.anchor?.time == 0)
        #expect(snapshot.stream?.buffered.map(\.fix.time) == [20])
        #expect(snapshot.stream?.recent.map(\.time) == [0, 20])
        #expect(engine.engineState.arrivals == 2)

        var restored = DetectionEngine(fences: [fence], configuration: engine.configuration)
        try restored.restore([snapshot], engineState: engine.engineState)
        #expect(restored.bufferedUpdateCount == 1)
        #expect(restored.devicesWithDwellsDue(by: Date(timeIntervalSince1970: 29)).isEmpty)
        #expect(restored.devicesWithDwellsDue(by: Date(timeIntervalSince1970: 30)) == ["d"])
        #expect(restored.process(update(20, 0.5, 0.6)).isEmpty, "a duplicate is still recognised")
        #expect(restored.statistics.duplicateUpdates == 1)
    }

    @Test("bad option state is refused with the device named; state of removed fences is dropped")
    func badState() throws {
        let fence = with(square("a", lat: 0, lon: 0), .init(entryDelay: 30))
        var engine = DetectionEngine(fences: [fence])
        let pending = DetectionEngine.PendingTransitionSnapshot(fence: "a", toInside: true, since: .nan, observedAt: 0,
                                                                coordinate: Coordinate(latitude: 0, longitude: 0), sequence: 0)
        let bad = DetectionEngine.DeviceSnapshot(device: "x", lastTime: 0, lastCoordinate: Coordinate(latitude: 0, longitude: 0),
                                                 updateCount: 1, memberships: [],
                                                 options: .init(pending: [pending]))
        #expect(throws: DetectionEngine.RestoreError.inconsistent(device: "x", reason: "a pending transition in fence a has a non-finite time")) {
            try engine.restore([bad])
        }
        var gone = bad
        gone.options?.pending[0].fence = "removed"
        try engine.restore([gone])
        #expect(engine.snapshot(of: "x")?.options?.pending.isEmpty == true)

        var stream = DetectionEngine(fences: [fence], configuration: .init(reorderWindow: 5))
        var unordered = bad
        unordered.options = nil
        let fix = { (t: Double) in DetectionEngine.FixSnapshot(time: t, coordinate: Coordinate(latitude: 0, longitude: 0), accuracy: nil) }
        unordered.stream = .init(buffered: [.init(fix: fix(9), arrival: 1), .init(fix: fix(3), arrival: 2)], newest: 9)
        #expect(throws: DetectionEngine.RestoreError.self) { try stream.restore([unordered]) }
        #expect(stream.knownDevices.isEmpty, "a refused restore changes nothing")
    }
}
