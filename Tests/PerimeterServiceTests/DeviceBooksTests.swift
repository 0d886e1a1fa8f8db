import Foundation
import PerimeterEngine
import PerimeterService
import PerimeterTestSupport
import Testing

/// The service finds each changed device's entry (pending mark, committed presence, engine handle) once
/// per batch, by the engine's slot where it has one. Whatever happens between commits — commits that
/// fail and are merged with later changes, forgotten devices coming back, reconfigurations that give
/// every device a new slot — what the store holds after a successful commit must be what a service
/// whose commits never fail stores for the same calls.
@Suite("Device books: commits after failures, forgets and rebuilds")
struct DeviceBooksTests {
    /// The store's contents, devices by id (their order of first appearance may differ after a failure).
    static func contents(_ store: any GeofencingStore) throws -> ([DeviceID: DetectionEngine.DeviceSnapshot], Int64, UInt64) {
        let state = try store.load()
        var devices: [DeviceID: DetectionEngine.DeviceSnapshot] = [:]
        for device in state.devices { devices[device.device] = device }
        return (devices, state.lastEventSequence, state.processedUpdates)
    }

    @Test("random failures, forgets and reconfigurations", arguments: [(1, UInt64(3)), (1, 4), (2, 5), (3, 6)])
    func matchesAServiceThatNeverFails(shards: Int, seed: UInt64) throws {
        let scenario = Scenario(seed: seed, fences: 10, devices: 12, updates: 1_200)
        let flaky = FlakyStore()
        let reference = InMemoryGeofencingStore()
        let service = GeofencingService(store: flaky, tickInterval: nil)
        let oracle = GeofencingService(store: reference, tickInterval: nil)
        var options = GeofencingOptions(defaultDwellTime: 40, timeModel: .data, shards: shards)
        for s in [service, oracle] {
            try s.configure(options)
            try s.addFeatures(scenario.features)
        }
        var rng = SplitMix64(seed: seed &* 7919)
        var failures = 0, forgets = 0
        for (k, start) in stride(from: 0, to: scenario.updates.count, by: 40).enumerated() {
            let failing = Int.random(in: 0..<10, using: &rng) < 4
            flaky.failing.withLock { $0 = failing }
            let batch = scenario.updates[start..<min(start + 40, scenario.updates.count)]
            do {
                _ = try service.process(batch)
                #expect(!failing)
            } catch {
                #expect(failing && error.code == .storageFailure)
                failures += 1
            }
            _ = try oracle.process(batch)
            if Int.random(in: 0..<4, using: &rng) == 0, let device = batch.randomElement(using: &rng)?.device,
               try oracle.deviceStatus(of: device).lastUpdateTime != nil {
                // Forget commits at once; with a failing store the forget stays pending.
                do { try service.forget(device: device) } catch { #expect(error.code == .storageFailure) }
                try oracle.forget(device: device)
                forgets += 1
            }
            if k % 7 == 6 {
                // A new engine: every device gets a new slot, every handle is stale.
                options.defaultDwellTime = options.defaultDwellTime == 40 ? 55 : 40
                flaky.failing.withLock { $0 = false }
                try service.configure(options)
                try oracle.configure(options)
            }
            guard !failing else { continue }
            try service.flush()
            try oracle.flush()
            let (devices, sequence, processed) = try Self.contents(flaky)
            let (expected, expectedSequence, expectedProcessed) = try Self.contents(reference)
            #expect(devices == expected, "batch \(k): every device as the oracle stored it")
            #expect(sequence == expectedSequence && processed == expectedProcessed, "batch \(k)")
        }
        flaky.failing.withLock { $0 = false }
        try service.flush()
        try oracle.flush()
        let (devices, sequence, _) = try Self.contents(flaky)
        let (expected, expectedSequence, _) = try Self.contents(reference)
        #expect(devices == expected && sequence == expectedSequence)
        #expect(failures > 3 && forgets > 3, "the scenario exercised failures (\(failures)) and forgets (\(forgets))")
        // A service reopened on the store resumes from it: the same presence as the one that wrote it.
        try service.close()
        let restarted = GeofencingService(store: flaky, tickInterval: nil)
        try restarted.configure(options)
        for device in expected.keys {
            #expect(try restarted.deviceStatus(of: device).presence == oracle.deviceStatus(of: device).presence)
        }
        try restarted.close()
        try oracle.close()
    }
}
