import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import Testing

/// Event and visit ids are stored (SQLite event log, webhook idempotency keys) and compared across
/// restarts and versions, so their values are pinned: a change to how they are computed must fail here.
@Suite("Event ids are stable across versions")
struct EventIdentityTests {
    @Test func pinnedIds() {
        var engine = DetectionEngine(fences: [
            Fence(id: "park", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100))),
        ])
        var events: [GeofenceEvent] = []
        for (i, latitude) in [0.01, 0.0, 0.0, 0.01].enumerated() {
            events += engine.process(LocationUpdate(device: "car-7", time: Date(timeIntervalSince1970: 1_700_000_000 + Double(i) * 30),
                                                    latitude: latitude, longitude: 0))
        }
        #expect(events.map(\.kind) == [.entry, .exit])
        #expect(events.map(\.id) == ["1b24bd92d8b873c4c528fe8e81c05c83", "b38147ce5a45a2c668aa31245789b413"])
        #expect(events.map(\.visitID) == ["f3c699fe79906f8772235bff98aace6d", "f3c699fe79906f8772235bff98aace6d"])
    }
}
