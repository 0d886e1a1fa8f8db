import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterService
import PerimeterTestSupport
import Testing

/// The in-memory store keeps its event log in the arrays the commits gave it (small commits gathered
/// into the last one): reading any stretch of it gives the events of one flat log, in order.
@Suite("In-memory store: the event log read back across commits")
struct InMemoryEventLogTests {
    /// The `sequence`-th event (distinct fields per event, so a misplaced one shows).
    static func event(_ sequence: Int64) -> GeofencingEvent {
        let engineEvent = GeofenceEvent(id: String(repeating: "0", count: 16) + String(format: "%016llx", sequence),
                                        visitID: String(repeating: "1", count: 32), kind: .entry,
                                        fence: FenceID("fence \(sequence % 7)"), device: DeviceID("device \(sequence % 5)"),
                                        time: Date(timeIntervalSince1970: 1_750_000_000 + Double(sequence)),
                                        coordinate: .init(latitude: 48, longitude: 2))
        return GeofencingEvent(sequence: sequence, event: engineEvent, fenceName: "name \(sequence)")
    }

    @Test("random commit sizes and random reads", arguments: [UInt64(1), 2, 3])
    func readsEqualAFlatLog(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let store = InMemoryGeofencingStore()
        var flat: [GeofencingEvent] = []
        var sizes: Set<Int> = []
        for _ in 0..<120 {
            // Mostly small commits (gathered), some large ones (kept as given), some empty.
            let count = Int.random(in: 0..<4, using: &rng) == 0 ? Int.random(in: 64...700, using: &rng)
                                                                 : Int.random(in: 0...70, using: &rng)
            sizes.insert(count)
            var changes = StoreChanges()
            changes.events = (0..<count).map { Self.event(Int64(flat.count + $0 + 1)) }
            try store.commit(changes)
            flat += changes.events
            #expect(try store.load().lastEventSequence == Int64(flat.count))
            for _ in 0..<5 {
                let after = Int64.random(in: -3...Int64(flat.count + 3), using: &rng)
                let limit = Int.random(in: -1...(Int.random(in: 0..<3, using: &rng) == 0 ? 5_000 : 80), using: &rng)
                let start = Int(max(0, min(after, Int64(flat.count))))
                let end = start + min(max(0, limit), flat.count - start)
                #expect(try store.events(after: after, limit: limit) == Array(flat[start..<end]), "after \(after), limit \(limit)")
            }
        }
        #expect(try store.events(after: 0, limit: .max) == flat)
        #expect(flat.count > 8_000 && sizes.contains { $0 >= 64 } && sizes.contains { $0 > 0 && $0 < 64 })
        // A commit that does not continue the log changes nothing.
        var gap = StoreChanges()
        gap.events = [Self.event(Int64(flat.count + 2))]
        #expect(throws: (any Error).self) { try store.commit(gap) }
        #expect(try store.events(after: 0, limit: .max) == flat)
    }
}
