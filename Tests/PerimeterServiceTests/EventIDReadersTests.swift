import Foundation
@testable import PerimeterEngine
import PerimeterFences
import PerimeterService
import PerimeterTestSupport
import Synchronization
import Testing

/// A service makes both ids of a logged event once, at logging, when a reader other than its caller
/// reads them (a store other than the in-memory one, a stream, the sink, an observer); with none, the
/// ids are made when the caller reads them (``GeofenceEvent/idAndVisitID`` for both at once). These tests
/// check that every reader, on either path, sees the same ids, JSON and values — and that each path is
/// the one taken.
@Suite("Event ids made by their readers")
struct EventIDReadersTests {
    /// Whether `event`'s ids are made (kept as texts or bits) rather than left to be made when read.
    static func idsMade(_ event: GeofenceEvent) -> Bool {
        if case .given = event.identity { return true }
        return false
    }

    /// Hears the events of every call.
    final class Observer: ExtendedGeofencingObserver {
        let heard = Mutex<[GeofencingEvent]>([])
        func onEntry(event: GeofencingEvent) { heard.withLock { $0.append(event) } }
        func onDwell(event: GeofencingEvent) { heard.withLock { $0.append(event) } }
        func onExit(event: GeofencingEvent) { heard.withLock { $0.append(event) } }
        func onCross(event: GeofencingEvent) { heard.withLock { $0.append(event) } }
        func onInside(event: GeofencingEvent) { heard.withLock { $0.append(event) } }
        func onError(error: GeofencingError) {}
        func onUserConsentChanged(isConsentGiven: Bool) {}
        func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool) {}
    }

    /// The texts a reader sees of an event: both ids read one by one and together, and its JSON.
    struct Seen: Equatable {
        var id: String, visitID: String, together: [String], json: [UInt8]
        init(_ logged: GeofencingEvent) {
            id = logged.event.id
            visitID = logged.event.visitID
            let (a, b) = logged.event.idAndVisitID
            together = [a, b]
            json = logged.json()
        }
    }

    @Test("the caller, the store, a stream, the sink and an observer see the same ids whether they were made at logging or when read",
          arguments: [(UInt64(61), 0), (62, 90), (63, 0)])
    func everyReaderSeesTheSameIDs(seed: UInt64, every: Int) async throws {
        let scenario = Scenario(seed: seed, fences: 12, devices: 10, updates: 3_000)
        let options = GeofencingOptions(defaultDwellTime: 40, timeModel: .data,
                                        durability: every == 0 ? .everyCall : .everyUpdates(every),
                                        detectionOptions: DetectionOptions(dwellEvery: seed == 63 ? 30 : nil),
                                        shards: seed == 62 ? 2 : 1)
        let alone = InMemoryGeofencingStore()
        let forwarding = InPlaceCommitTests.ForwardingStore()
        let services = [GeofencingService(store: alone, tickInterval: nil),
                        GeofencingService(store: InMemoryGeofencingStore(), tickInterval: nil),
                        GeofencingService(store: InMemoryGeofencingStore(), tickInterval: nil),
                        GeofencingService(store: InMemoryGeofencingStore(), tickInterval: nil),
                        GeofencingService(store: forwarding, tickInterval: nil)]
        let sunk = Mutex<[GeofencingEvent]>([])
        services[1].setEventSink { events in sunk.withLock { $0 += events } }
        let observer = Observer()
        services[2].addObserver(observer)
        let stream = services[3].events()
        for service in services {
            try service.configure(options)
            try service.addFeatures(scenario.features)
        }
        var results = Array(repeating: [GeofencingEvent](), count: services.count)
        var position = 0, batch = 1
        while position < scenario.updates.count {
            let updates = Array(scenario.updates[position..<min(position + batch, scenario.updates.count)])
            position += updates.count
            batch = batch % 37 + 1
            for (k, service) in services.enumerated() { results[k] += try service.process(updates).events }
        }
        // Past every pending dwell and timeout (a finite time: repeated dwells go on while the device stays).
        let end = scenario.updates.map(\.time).max()!.addingTimeInterval(600)
        for (k, service) in services.enumerated() { results[k] += try service.advance(to: end) }
        for service in services { try service.flush() }

        let made = results[0]
        #expect(made.count > 100 && Set(made.map(\.event.kind)).isSuperset(of: [.entry, .dwell, .exit]),
                "the scenario has events of every kind (\(made.count))")
        // The path each service takes: only the one whose caller is the only reader leaves the ids.
        #expect(made.allSatisfy { !Self.idsMade($0.event) }, "the caller alone: ids left to be made when read")
        for k in 1..<services.count {
            #expect(results[k].allSatisfy { Self.idsMade($0.event) }, "service \(k): ids made at logging")
        }
        // Every reader's events, and what it reads of them, are the caller-only service's.
        let seen = made.map(Seen.init)
        var streamed: [GeofencingEvent] = []
        for service in services { try service.close() }
        for await event in stream { streamed.append(event) }
        let readers: [(String, [GeofencingEvent])] = [
            ("the in-memory store, caller alone", try alone.events(after: 0, limit: .max)),
            ("the sink's service", results[1]), ("the sink", sunk.withLock { $0 }),
            ("the observer's service", results[2]), ("the observer", observer.heard.withLock { $0 }),
            ("the stream's service", results[3]), ("the stream", streamed),
            ("another store's service", results[4]), ("another store", try forwarding.events(after: 0, limit: .max)),
        ]
        for (reader, events) in readers {
            #expect(events == made, "\(reader): the events")
            #expect(events.map(\.hashValue) == made.map(\.hashValue), "\(reader): their hashes")
            #expect(events.map(Seen.init) == seen, "\(reader): their ids and JSON")
        }
        // Read again: the same texts (an event whose ids are made when read makes the same ones each time).
        #expect(made.map(Seen.init) == seen)
        // Made at once from the engine's inputs, the ids are the ones read.
        for logged in made.prefix(200) {
            var event = logged.event
            event.makeIDsNow()
            #expect(Self.idsMade(event) && event.id == logged.event.id && event.visitID == logged.event.visitID)
        }
    }
}
