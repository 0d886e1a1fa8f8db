import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The engine keeps an event's id inputs and makes the ids when read (``EventIdentity``). These tests
/// check the ids against their definition computed another way, and that an event behaves as a value
/// whose ids were fixed when it was made: edits, equality and hashing as if the ids were stored.
@Suite("Event ids made when read")
struct EventIDOnReadTests {
    /// Random walks on the grid of `EventIdentityTests` with equal times and jumps.
    static func events(seed: UInt64, options: DetectionOptions = DetectionOptions()) -> (DetectionEngine, [GeofenceEvent]) {
        var rng = SplitMix64(seed: seed)
        var engine = DetectionEngine(fences: EventIdentityTests.grid(dwell: 25), configuration: .init(options: options))
        var events: [GeofenceEvent] = []
        for update in EventIdentityTests.walk(devices: ["a", "bus-12", "a device with a long id"], count: 1500,
                                              rng: &rng, jump: true) {
            engine.process(update, into: &events)
        }
        engine.advance(to: Date(timeIntervalSince1970: 1e7), into: &events)
        return (engine, events)
    }

    /// The event id by its definition (docs/semantics.md, "Event and visit ids"), from the visit id's
    /// text: not through the engine's inputs nor `combine(hexOf:)`.
    static func definedID(visitID: String, kind: GeofenceEventKind, time: Double) -> String {
        var hash = StableHash()
        hash.combine(visitID)
        hash.combine(kind.rawValue)
        hash.combine(time)
        return hash.hex
    }

    @Test("entry, dwell and exit ids are the definition's; an entry's visit id is the one presence reports",
          arguments: [UInt64(31), 32, 33])
    func idsFollowTheDefinition(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var engine = DetectionEngine(fences: EventIdentityTests.grid(dwell: 25))
        var checkedEntries = 0
        var all: [GeofenceEvent] = []
        for update in EventIdentityTests.walk(devices: ["a", "bus-12"], count: 1500, rng: &rng, jump: true) {
            var events: [GeofenceEvent] = []
            engine.process(update, into: &events)
            let presence = engine.presence(of: update.device)
            for event in events where event.kind == .entry {
                // Presence derives the visit id from the membership, not from the event.
                #expect(presence.first { $0.fence == event.fence }?.visitID == event.visitID)
                checkedEntries += 1
            }
            all += events
        }
        engine.advance(to: Date(timeIntervalSince1970: 1e7), into: &all)
        #expect(checkedEntries > 50 && Set(all.map(\.kind)) == [.entry, .dwell, .exit])
        for event in all {
            #expect(event.id == Self.definedID(visitID: event.visitID, kind: event.kind,
                                               time: event.time.timeIntervalSince1970))
            let (id, visit) = event.identifiers
            #expect(id.text == event.id && visit.text == event.visitID)
        }
    }

    @Test("editing kind, fence, device or time keeps the ids; setting one id keeps the other; makeIDsNow changes no value; idAndVisitID reads both",
          arguments: [UInt64(41), 42])
    func editsKeepIDs(seed: UInt64) {
        for options in [DetectionOptions(), DetectionOptions(crossings: true, initialTrigger: .inside, dwellEvery: 30)] {
            let (_, events) = Self.events(seed: seed, options: options)
            #expect(events.count > 100)
            for (n, event) in events.enumerated() {
                let id = event.id, visit = event.visitID
                var edited = event
                switch n % 4 {
                case 0: edited.kind = event.kind == .exit ? .entry : .exit
                case 1: edited.fence = FenceID(event.fence.rawValue + "x")
                case 2: edited.device = DeviceID(event.device.rawValue + "x")
                default: edited.time = event.time.addingTimeInterval(1)
                }
                #expect(edited.id == id && edited.visitID == visit)
                #expect(edited != event)
                var renamed = event
                renamed.id = "mine"
                #expect(renamed.id == "mine" && renamed.visitID == visit)
                var revisited = event
                revisited.visitID = "visit"
                #expect(revisited.id == id && revisited.visitID == "visit")
                #expect(renamed != event && revisited != event)
                var made = event
                made.makeIDsNow()
                #expect(made == event && made.id == id && made.visitID == visit)
                // Both at once: the same texts, whether made now, made before, given or edited.
                #expect(event.idAndVisitID == (id, visit) && made.idAndVisitID == (id, visit))
                #expect(edited.idAndVisitID == (id, visit) && renamed.idAndVisitID == ("mine", visit)
                        && revisited.idAndVisitID == (id, "visit"))
                if case .derived = made.identity { Issue.record("makeIDsNow kept the inputs") }
            }
        }
    }

    @Test("an event equals and hashes as its stored form (ids as text), and differs when an id differs",
          arguments: [UInt64(51), 52])
    func equalToStoredForm(seed: UInt64) {
        for options in [DetectionOptions(), DetectionOptions(initialTrigger: .inside, dwellEvery: 30)] {
            let (_, events) = Self.events(seed: seed, options: options)
            let (_, again) = Self.events(seed: seed, options: options)
            #expect(events == again)
            for event in events {
                let stored = GeofenceEvent(id: event.id, visitID: event.visitID, kind: event.kind, fence: event.fence,
                                           device: event.device, time: event.time, coordinate: event.coordinate,
                                           timeInside: event.timeInside, observedAt: event.observedAt, reason: event.reason)
                #expect(stored == event && event == stored)
                #expect(stored.hashValue == event.hashValue)
                var other = stored
                other.id = String(event.id.reversed())
                #expect(other != event && event != other)
            }
            #expect(Set(events).count == Set(events.map(\.id)).count)
        }
    }
}
