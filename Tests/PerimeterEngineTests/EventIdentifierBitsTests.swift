import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// ``GeofenceEvent/idBits`` and ``GeofenceEvent/visitIDBits`` are the ids' values exactly when the ids
/// are 32 lower-case hex digits (the SQLite store keeps such ids as 16 bytes and writes the digits
/// back from them when it reads the event).
@Suite("Event ids as bits")
struct EventIdentifierBitsTests {
    /// 32 lower-case hex digits of `bits`, written here independently of the engine's formatting.
    static func hex(_ bits: (high: UInt64, low: UInt64)) -> String {
        func word(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return word(bits.high) + word(bits.low)
    }

    static func isEngineForm(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func check(_ text: String, _ bits: (high: UInt64, low: UInt64)?) {
        if let bits {
            #expect(hex(bits) == text)
        } else {
            #expect(!isEngineForm(text), "\(text) is 32 lower-case hex digits but has no bits")
        }
    }

    @Test("the engine's ids and ids given as text, seeded")
    func bitsAreTheDigits() {
        var engine = DetectionEngine(fences: [EventIdentityTests.park])
        let made = EventIdentityTests.carUpdates().flatMap { engine.process($0) }
        #expect(!made.isEmpty)
        for event in made {
            #expect(event.idBits != nil && event.visitIDBits != nil)
        }
        var random = SplitMix64(seed: 19)
        let hex = Array("0123456789abcdef")
        var given: [GeofenceEvent] = []
        for _ in 0..<300 {
            let digits = String((0..<32).map { _ in hex[Int(random.next() % 16)] })
            let texts = [digits, digits.uppercased(), String(digits.dropLast()), "", "é✓ visit", digits + "0",
                         "0" + digits.dropFirst(), String(repeating: "f", count: 32), String(repeating: "0", count: 32),
                         String(digits.dropLast()) + "g"]
            given.append(GeofenceEvent(id: texts[Int(random.next() % 10)], visitID: texts[Int(random.next() % 10)], kind: .exit,
                                       fence: "f", device: "d", time: Date(timeIntervalSince1970: 0),
                                       coordinate: Coordinate(latitude: 0, longitude: 0)))
        }
        #expect(given.contains { $0.idBits != nil } && given.contains { $0.idBits == nil })
        #expect(given.contains { $0.visitIDBits != nil } && given.contains { $0.visitIDBits == nil })
        for event in made + given {
            Self.check(event.id, event.idBits)
            Self.check(event.visitID, event.visitIDBits)
        }
        // Given ids in the engine's form are held as bits: the same text always gives bits.
        let allF = GeofenceEvent(id: String(repeating: "f", count: 32), visitID: "0123456789abcdef0123456789abcdef", kind: .entry,
                                 fence: "f", device: "d", time: Date(timeIntervalSince1970: 0), coordinate: Coordinate(latitude: 0, longitude: 0))
        #expect(allF.idBits.map { [$0.high, $0.low] } == [.max, .max])
        #expect(allF.visitIDBits.map { [$0.high, $0.low] } == [0x0123_4567_89ab_cdef, 0x0123_4567_89ab_cdef])
    }
}
