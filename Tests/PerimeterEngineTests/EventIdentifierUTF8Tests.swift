import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// ``GeofenceEvent/appendIDUTF8(to:)`` and ``GeofenceEvent/appendVisitIDUTF8(to:)`` give exactly the
/// bytes of ``GeofenceEvent/id`` and ``GeofenceEvent/visitID`` (the SQLite store writes them into its
/// rows instead of the Strings).
@Suite("Event ids appended as UTF-8")
struct EventIdentifierUTF8Tests {
    static func appended(_ event: GeofenceEvent) -> ([UInt8], [UInt8]) {
        var id: [UInt8] = [7], visit: [UInt8] = []  // `id` after a byte already there: appends only
        event.appendIDUTF8(to: &id)
        event.appendVisitIDUTF8(to: &visit)
        return (Array(id.dropFirst()), visit)
    }

    @Test("the engine's ids (bits) and ids given as text, seeded")
    func sameBytesAsTheStrings() {
        var engine = DetectionEngine(fences: [EventIdentityTests.park])
        let made = EventIdentityTests.carUpdates().flatMap { engine.process($0) }
        #expect(!made.isEmpty)
        var random = SplitMix64(seed: 18)
        let hex = Array("0123456789abcdef")
        var given: [GeofenceEvent] = []
        for _ in 0..<200 {
            let digits = String((0..<32).map { _ in hex[Int(random.next() % 16)] })
            let texts = [digits, digits.uppercased(), String(digits.dropLast()), "", "é✓ visit", digits + "0"]
            given.append(GeofenceEvent(id: texts[Int(random.next() % 6)], visitID: texts[Int(random.next() % 6)], kind: .entry,
                                       fence: "f", device: "d", time: Date(timeIntervalSince1970: 0),
                                       coordinate: Coordinate(latitude: 0, longitude: 0)))
        }
        #expect(given.contains { if case .bits = $0.identifier { true } else { false } })
        #expect(given.contains { if case .text = $0.identifier { true } else { false } })
        for event in made + given {
            let (id, visit) = Self.appended(event)
            #expect(id == Array(event.id.utf8), "\(event.id)")
            #expect(visit == Array(event.visitID.utf8), "\(event.visitID)")
        }
    }
}
