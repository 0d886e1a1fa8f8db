import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import Testing

/// What a commit stores of each device's presence, when the service skips rebuilding the memberships of
/// devices whose presence the engine still holds as committed (`DetectionEngine.PresenceStamp`): after
/// every batch, and across fence removals, re-additions, replacements and reconfigurations (which number
/// fences anew), the store holds exactly the engine's presence.
@Suite("Committed presence: the store holds the engine's presence")
struct CommittedPresenceTests {
    /// The presence the service reports for each device (read from its engine).
    static func presence(_ service: GeofencingService, _ devices: [DeviceID]) throws -> [DeviceID: [String]] {
        var result: [DeviceID: [String]] = [:]
        for device in devices {
            guard let status = try? service.deviceStatus(of: device), status.lastUpdateTime != nil else { continue }
            result[device] = status.presence.map { "\($0.fence)@\($0.since.timeIntervalSince1970)/\($0.hasDwelled)" }
        }
        return result
    }

    /// The presence the store holds for each device.
    static func stored(_ store: any GeofencingStore) throws -> [DeviceID: [String]] {
        var result: [DeviceID: [String]] = [:]
        for device in try store.load().devices {
            result[device.device] = device.memberships.map { "\($0.fence)@\($0.entryTime)/\($0.hasDwelled)" }
        }
        return result
    }

    @Test("batches with fence changes and reconfigurations between them", arguments: [StoreKind.memory, .sqlite])
    func storeHoldsEnginePresence(kind: StoreKind) throws {
        let scenario = Scenario(seed: 17, fences: 10, devices: 8, updates: 900)
        let devices = Set(scenario.updates.map(\.device)).sorted()
        let harness = StoreHarness(kind)
        let store = try harness.open()
        let service = GeofencingService(store: store, tickInterval: nil)
        var options = GeofencingOptions(defaultDwellTime: 40, timeModel: .data)
        try service.configure(options)
        try service.addFeatures(scenario.features)
        var unchangedSeen = false
        for (k, start) in stride(from: 0, to: scenario.updates.count, by: 60).enumerated() {
            let before = try Self.stored(store)
            _ = try service.process(scenario.updates[start..<min(start + 60, scenario.updates.count)])
            let now = try Self.presence(service, devices)
            #expect(try Self.stored(store) == now, "batch \(k): the store holds the engine's presence")
            unchangedSeen = unchangedSeen || devices.contains { before[$0] != nil && before[$0] == now[$0] }
            // Between batches, something that changes the fences or renumbers them.
            let feature = scenario.features[k % scenario.features.count]
            switch k % 4 {
            case 0: try service.removeFeature(id: FenceID(feature.id!.description))
            case 1: try service.addFeature(feature)  // back, in a new slot (or replaced in place)
            case 2:
                options.defaultDwellTime = options.defaultDwellTime == 40 ? 50 : 40
                try service.configure(options)  // a new engine: fences numbered anew
            default: try service.addFeatures(scenario.features)  // every fence replaced in place
            }
            try service.flush()
            #expect(try Self.stored(store) == Self.presence(service, devices), "after the change after batch \(k)")
        }
        #expect(unchangedSeen, "some device kept its presence over a batch")
        try service.close()
        let reopened = try harness.open()
        let restarted = GeofencingService(store: reopened, tickInterval: nil)
        try restarted.configure(options)
        #expect(try Self.presence(restarted, devices) == Self.stored(reopened))
        try restarted.close()
    }
}
