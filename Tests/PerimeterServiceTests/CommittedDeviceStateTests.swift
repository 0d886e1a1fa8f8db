import Foundation
import PerimeterEngine
import PerimeterFences
@testable import PerimeterService
import PerimeterTestSupport
import Testing

/// What the in-memory store holds of every device after each commit is the state of a bare engine given
/// the same batches and forgets: every field of every `DeviceSnapshot` (position, update count,
/// memberships, option and stream state). The commit builds these snapshots in place, one blank entry per
/// touched device, the memberships taken from its books when the presence is unchanged, an entry left to
/// the next device when the engine no longer knows one; comparing with the engine itself (not with
/// another service, which shares that code) checks all of it. Batches are not committed on their own
/// (durability every 100,000 updates): a forget commits at once, with the batch's devices still pending,
/// the forgotten one among them — the case where the engine no longer knows a touched device.
@Suite("Committed device state equals a bare engine's")
struct CommittedDeviceStateTests {
    /// `inPlace`: on an `InMemoryGeofencingStore` itself, whose commit the engine writes in place
    /// (`ServiceCore.commitInPlace`); else through ``ChangeCheckingStore`` (the protocol's commit).
    static func check(seed: UInt64, options: GeofencingOptions, inPlace: Bool = false) throws {
        let scenario = Scenario(seed: seed, fences: 10, devices: 12, updates: 1_200)
        let checking = ChangeCheckingStore(), memory = InMemoryGeofencingStore()
        let store: any GeofencingStore = inPlace ? memory : checking
        let service = GeofencingService(store: store, tickInterval: nil)
        try service.configure(options)
        try service.addFeatures(scenario.features)
        var engine = ShardedEngine(fences: FenceLoaderHelper.fences(scenario.features),
                                   configuration: options.engineConfiguration, shards: options.shards)
        var rng = SplitMix64(seed: seed &* 6_151)
        var forgets = 0, commits = 0
        for start in stride(from: 0, to: scenario.updates.count, by: 40) {
            let batch = Array(scenario.updates[start..<min(start + 40, scenario.updates.count)])
            _ = try service.process(batch)
            _ = batch.withUnsafeBufferPointer { engine.processOnDataClock($0, clockOnly: []) }
            // Forget a device or two now and then; one that sent nothing accepted is refused by both.
            for _ in 0..<(Int.random(in: 0..<3, using: &rng) == 0 ? 2 : 0) {
                guard let device = batch.randomElement(using: &rng)?.device else { continue }
                var events: [GeofenceEvent] = []
                let known = engine.forget(device, into: &events)
                do {
                    try service.forget(device: device)
                    #expect(known)
                    forgets += 1
                } catch {
                    #expect(!known && error.code == .deviceNotFound)
                }
            }
            try service.flush()  // the batch, when no forget committed it
            commits += 1
            // With several shards an option state's `lastSequence` is put on the engine-wide scale when
            // the snapshot is taken (the engine's accepted-update count then, capped by later fence
            // additions), so it moves for devices that sent nothing; the store keeps it as of the
            // device's last commit. Compared with one shard only.
            func comparable(_ snapshot: DetectionEngine.DeviceSnapshot) -> DetectionEngine.DeviceSnapshot {
                guard options.shards > 1, snapshot.options != nil else { return snapshot }
                var copy = snapshot
                copy.options?.lastSequence = 0
                return copy
            }
            var stored: [DeviceID: DetectionEngine.DeviceSnapshot] = [:]
            for device in try store.load().devices { stored[device.device] = comparable(device) }
            var expected: [DeviceID: DetectionEngine.DeviceSnapshot] = [:]
            for device in engine.deviceSnapshots { expected[device.device] = comparable(device) }
            #expect(stored == expected, "after batch \(commits)")
        }
        #expect(forgets > 5, "the scenario forgot devices (\(forgets))")
        if !inPlace {
            #expect(checking.changedPresences > 20 && checking.unchangedPresences > 20,
                    "both kinds of device change occur (\(checking.changedPresences) changed, \(checking.unchangedPresences) unchanged)")
        }
        try service.close()
    }

    @Test("default semantics with dwells: one and three shards, both commits",
          arguments: [(1, UInt64(21), false), (3, 22, false), (1, 21, true), (3, 22, true)])
    func defaultSemantics(shards: Int, seed: UInt64, inPlace: Bool) throws {
        try Self.check(seed: seed, options: GeofencingOptions(defaultDwellTime: 40, timeModel: .data, durability: .everyUpdates(100_000),
                                                                  shards: shards), inPlace: inPlace)
    }

    @Test("detection and stream options: one and two shards, both commits",
          arguments: [(1, UInt64(23), false), (2, 24, false), (1, 23, true), (2, 24, true)])
    func options(shards: Int, seed: UInt64, inPlace: Bool) throws {
        try Self.check(seed: seed, options: GeofencingOptions(
            defaultDwellTime: 30, timeModel: .data, durability: .everyUpdates(100_000),
            detectionOptions: DetectionOptions(entryDelay: 4, exitDelay: 3, dwellEvery: 30, staleAfter: 40, exitOnStale: true),
            reorderWindow: 5, deduplicate: true, shards: shards), inPlace: inPlace)
    }
}

/// An in-memory store that checks, before storing them, what each `DeviceChange` says of the presence it
/// already holds: `presenceChanged` exactly when the memberships differ from those it holds, and
/// `storedMemberships`, when given, exactly those. The commit writes its entries over the last commit's
/// (another device's change): a flag or stored list left from there would tell a store that writes only
/// the differences (SQLite) to remove rows it does not hold, or to keep stale ones; the in-memory store's
/// contents would not show it.
final class ChangeCheckingStore: GeofencingStore, @unchecked Sendable {
    private let inner = InMemoryGeofencingStore()
    private(set) var changedPresences = 0
    private(set) var unchangedPresences = 0

    func load() throws -> StoredState { try inner.load() }

    func commit(_ changes: StoreChanges) throws {
        var held: [DeviceID: [DetectionEngine.MembershipSnapshot]] = [:]
        for device in try inner.load().devices { held[device.device] = device.memberships }
        for device in changes.forgottenDevices { held[device] = nil }
        for change in changes.devices {
            let before = held[change.snapshot.device] ?? []
            #expect(change.presenceChanged == (change.snapshot.memberships != before),
                    "\(change.snapshot.device): presenceChanged \(change.presenceChanged), memberships \(change.snapshot.memberships), held \(before)")
            if change.presenceChanged {
                changedPresences += 1
                if let stored = change.storedMemberships { #expect(stored == before, "\(change.snapshot.device): storedMemberships") }
            } else {
                unchangedPresences += 1
                #expect(change.storedMemberships == nil, "\(change.snapshot.device): storedMemberships without a change")
            }
        }
        try inner.commit(changes)
    }

    func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent] {
        try inner.events(after: sequence, limit: limit)
    }
}
