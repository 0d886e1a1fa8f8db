import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

@Suite("FenceSet bookkeeping")
struct FenceSetTests {
    private static func fence(_ id: Int, options: Bool) -> Fence {
        Fence(id: FenceID(String(id)), region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 10)),
              options: options ? DetectionOptions(hysteresis: 5) : DetectionOptions())
    }

    @Test("containsFenceOptions follows upserts, replacements, removals and removeAll", arguments: [1, 2, 3, 4])
    func containsFenceOptionsMatchesBruteForce(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var set = FenceSet()
        for _ in 0..<2_000 {
            let id = Int.random(in: 0..<20, using: &random)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<55: set.upsert(Self.fence(id, options: Int.random(in: 0..<8, using: &random) == 0))
            case 55..<99: set.remove(id: FenceID(String(id)))
            default: set.removeAll()
            }
            #expect(set.containsFenceOptions == set.fences.contains { !$0.options.isOff })
        }
    }

    @Test func emptySetHasNoFenceOptions() {
        #expect(!FenceSet().containsFenceOptions)
        #expect(FenceSet([Self.fence(1, options: true)]).containsFenceOptions)
        #expect(!FenceSet([Self.fence(1, options: true), Self.fence(1, options: false)]).containsFenceOptions)
    }
}
