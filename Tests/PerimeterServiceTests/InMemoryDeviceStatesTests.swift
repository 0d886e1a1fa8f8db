import Foundation
import PerimeterEngine
import PerimeterFences
@testable import PerimeterService
import PerimeterTestSupport
import Testing

/// The in-memory store's device states found by the service's device numbers (`DeviceChange.deviceNumber`)
/// against a model that finds them by id only (the store as it was): random commits of changed, new,
/// forgotten and returning devices, fence removals, numbers that are right, stale (naming another
/// device, as after a restart), absent (-1) or far too large; enough devices forgotten that the store
/// compacts its states. After every commit `load()` gives exactly the model's devices, in its order.
@Suite("In-memory store: device states by number equal those by id")
struct InMemoryDeviceStatesTests {
    /// The store as it was: states by id, in the order first stored (a returning device goes last).
    struct Model {
        var states: [DeviceID: DetectionEngine.DeviceSnapshot] = [:]
        var order: [DeviceID] = []

        mutating func apply(_ changes: StoreChanges) {
            for change in changes.fences {
                switch change {
                case .upsert: continue
                case .remove(let id):
                    for device in order { states[device]?.memberships.removeAll { $0.fence == id } }
                case .removeAll:
                    for device in order { states[device]?.memberships = [] }
                }
            }
            for device in changes.forgottenDevices where states.removeValue(forKey: device) != nil {
                order.removeAll { $0 == device }
            }
            for change in changes.devices {
                let device = change.snapshot.device
                var state = change.snapshot
                if let old = states[device] {
                    if !change.presenceChanged { state.memberships = old.memberships }
                } else {
                    order.append(device)
                    if !change.presenceChanged { state.memberships = [] }
                }
                states[device] = state
            }
        }

        var all: [DetectionEngine.DeviceSnapshot] { order.map { states[$0]! } }
    }

    static func snapshot(_ device: DeviceID, _ random: inout SplitMix64) -> DetectionEngine.DeviceSnapshot {
        let fences = (0..<Int.random(in: 0...3, using: &random)).map { _ in FenceID("f\(Int.random(in: 0..<6, using: &random))") }
        return DetectionEngine.DeviceSnapshot(
            device: device, lastTime: Double(random.next() % 1_000), lastCoordinate: .init(latitude: 1, longitude: 2),
            updateCount: random.next() % 100,
            memberships: Set(fences).sorted().map { .init(fence: $0, entryTime: 5, visitSequence: 1, hasDwelled: false) })
    }

    @Test("random commits", arguments: [31, 32, 33] as [UInt64])
    func randomCommits(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = InMemoryGeofencingStore()
        var model = Model()
        // Device k is "d<k>", numbered k by the service; later (a restart) numbered otherwise.
        let devices = 3_000
        var numberOf = Array(0..<devices).map(Int32.init)
        var hits = (right: 0, stale: 0, none: 0, huge: 0)
        for round in 0..<120 {
            var changes = StoreChanges()
            if round % 40 == 39 { numberOf.shuffle(using: &random) }  // another service's numbering
            switch Int.random(in: 0..<10, using: &random) {
            case 0: changes.fences = [.remove(FenceID("f\(Int.random(in: 0..<6, using: &random))"))]
            case 1 where round % 30 == 0: changes.fences = [.removeAll]
            default: break
            }
            // Now and then forget nine devices in ten (more than stay stored, so that the store compacts),
            // else a few.
            if round % 25 == 24 {
                changes.forgottenDevices = (0..<devices).filter { _ in Int.random(in: 0..<10, using: &random) != 0 }.map { DeviceID("d\($0)") }
            } else {
                changes.forgottenDevices = (0..<Int.random(in: 0...3, using: &random)).map { _ in DeviceID("d\(Int.random(in: 0..<devices, using: &random))") }
            }
            // Each device at most once per commit.
            let window = Int.random(in: 0..<devices, using: &random)
            let count = Int.random(in: 0...120, using: &random)
            for k in Set((0..<count).map { _ in (window + Int.random(in: 0..<400, using: &random)) % devices }).sorted() {
                let device = DeviceID("d\(k)")
                var change = DeviceChange(snapshot: Self.snapshot(device, &random), presenceChanged: Bool.random(using: &random))
                switch Int.random(in: 0..<8, using: &random) {
                case 0: change.deviceNumber = -1; hits.none += 1
                case 1: change.deviceNumber = Int32.random(in: 0..<Int32(devices), using: &random); hits.stale += 1
                case 2: change.deviceNumber = Int32.max - Int32.random(in: 0..<9, using: &random); hits.huge += 1
                default: change.deviceNumber = numberOf[k]; hits.right += 1
                }
                changes.devices.append(change)
            }
            try store.commit(changes)
            model.apply(changes)
            let loaded = try store.load().devices
            // Compared as a whole, reported briefly (the lists hold thousands of devices).
            let same = loaded == model.all
            #expect(same, "round \(round): \(loaded.count) devices loaded, \(model.all.count) expected")
            if !same { return }
        }
        #expect(hits.right > 1_000 && hits.stale > 100 && hits.none > 100 && hits.huge > 100, "\(hits)")
        #expect(store.deviceStateCompactions > 0, "the store compacted its states")
    }
}
