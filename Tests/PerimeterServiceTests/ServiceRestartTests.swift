import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import Testing
import PerimeterTestSupport

@Suite("Restart resumes exactly")
struct ServiceRestartTests {
    /// The data clock: every run is compared with the bare engine's replay.
    static let options = GeofencingOptions(defaultDwellTime: 45, timeModel: .data)

    @Test("a run restarted at random points logs exactly the events of the bare engine",
          arguments: StoreKind.allCases, [1 as UInt64, 2, 3])
    func randomRestarts(kind: StoreKind, seed: UInt64) throws {
        let scenario = Scenario(seed: seed)
        let expected = scenario.engineEvents(defaultDwellTime: Self.options.defaultDwellTime)
        #expect(expected.count > 20, "the scenario must produce events")
        #expect(expected.contains { $0.kind == .dwell })

        var rng = SplitMix64(seed: seed &* 7919)
        let harness = StoreHarness(kind)
        var service = try harness.service(Self.options)
        try service.addFeatures(scenario.features)
        var position = 0
        while position < scenario.updates.count {
            if Int.random(in: 0..<4, using: &rng) == 0 {
                service = try harness.service(Self.options)  // restart
                #expect(service.processedUpdateCount == UInt64(position))
            }
            let end = min(scenario.updates.count, position + Int.random(in: 1...40, using: &rng))
            try service.process(scenario.updates[position..<end])
            position = end
        }
        service = try harness.service(Self.options)
        let logged = try service.loggedEvents(after: 0, limit: 100_000)
        #expect(logged.map(\.event) == expected)
        #expect(logged.map(\.sequence) == Array(1...Int64(logged.count)))
    }

    @Test("same-instant re-entries: restarts between updates of one instant, and batches re-sent after a crash, keep every id",
          arguments: StoreKind.allCases, [false, true])
    func sameInstantRestartsAndRetries(kind: StoreKind, deduplicate: Bool) throws {
        // A device that leaves and re-enters the fence several times at one instant, then stays.
        let t = 1_750_000_000.0
        // Positions differ a little, so that duplicate suppression does not take them for repeats.
        let positions = [48.0, 48.01, 48.0001, 48.0101, 48.0002, 48.0002, 48.01].map { (latitude: $0, longitude: 2.0) }
        let times = [t, t, t, t, t, t + 30, t + 100]
        let updates = zip(times, positions).map { time, p in
            LocationUpdate(device: "van", time: Date(timeIntervalSince1970: time), latitude: p.latitude, longitude: p.longitude)
        }
        let options = GeofencingOptions(defaultDwellTime: 20, deduplicate: deduplicate)
        let feature = circle("depot", latitude: 48, longitude: 2, radius: 300)
        let reference = GeofencingService()
        try reference.configure(options)
        try reference.addFeature(feature)
        _ = try reference.process(updates)
        let expected = try reference.loggedEvents(after: 0, limit: 1000).map(\.event)
        #expect(expected.map(\.kind) == [.entry, .exit, .entry, .exit, .entry, .dwell, .exit])
        #expect(Set(expected.map(\.id)).count == expected.count)

        for cut in 1..<updates.count {
            let harness = StoreHarness(kind)
            var service = try harness.service(options)
            try service.addFeature(feature)
            _ = try service.process(updates[..<cut])
            service = try harness.service(options)  // restart
            // The client re-sends everything from the start: what was processed is rejected as older (or
            // absorbed), the update at the cut is the same as the last processed one (no new event).
            let retry = deduplicate ? updates[...] : updates[(cut - 1)...]
            _ = try service.process(retry)
            let logged = try service.loggedEvents(after: 0, limit: 1000).map(\.event)
            #expect(logged == expected, "restart after update \(cut)")
        }
    }

    @Test("group commit: a restart loses only the uncommitted tail, and resuming from processedUpdateCount repairs it",
          arguments: StoreKind.allCases)
    func groupCommit(kind: StoreKind) throws {
        let scenario = Scenario(seed: 11)
        let expected = scenario.engineEvents(defaultDwellTime: 45)
        let harness = StoreHarness(kind)
        var options = Self.options
        options.durability = .everyUpdates(50)
        var service = try harness.service(options)
        try service.addFeatures(scenario.features)
        try service.process(scenario.updates[0..<130])  // commits at 50? no: one call of 130 commits once
        try service.process(scenario.updates[130..<140])  // 10 pending, not committed
        service = try harness.service(options)  // "crash": nothing flushed
        #expect(service.processedUpdateCount == 130)
        let resume = Int(service.processedUpdateCount)
        try service.process(scenario.updates[resume...])
        try service.flush()
        #expect(try service.loggedEvents(after: 0, limit: 100_000).map(\.event) == expected)
    }

    @Test("no entry re-fires, dwell falls due as if never stopped, features come back with their properties",
          arguments: StoreKind.allCases)
    func resumeDetails(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        var service = try harness.service(GeofencingOptions())
        let park = circle("park", latitude: 48, longitude: 2, radius: 500, dwell: 60, group: "parks",
                          extra: ["note": "bench", "rank": 3])
        try service.addFeature(park)
        let entry = try service.process(LocationUpdate(device: "phone", time: date(1000), latitude: 48, longitude: 2))
        #expect(entry.map(\.event.kind) == [.entry])

        service = try harness.service(GeofencingOptions())
        #expect(try service.feature(id: "park") == park)
        #expect(try service.features(group: "parks") == [park])
        let status = try service.deviceStatus(of: "phone")
        #expect(status.presence.map(\.fence) == ["park"])
        #expect(status.lastUpdateTime == date(1000))
        #expect(try service.advance(to: date(1059)).isEmpty)
        #expect(try service.process(LocationUpdate(device: "phone", time: date(1030), latitude: 48, longitude: 2)).isEmpty,
                "no entry re-fires for a device already inside")

        service = try harness.service(GeofencingOptions())
        let dwell = try service.advance(to: date(2000))
        #expect(dwell.map(\.event.kind) == [.dwell])
        #expect(dwell.first?.event.time == date(1060))
        #expect(dwell.first?.event.visitID == entry.first?.event.visitID)
        #expect(dwell.first?.sequence == 2)

        service = try harness.service(GeofencingOptions())
        #expect(try service.advance(to: date(3000)).isEmpty, "a fired dwell does not fire again after a restart")
        let exit = try service.process(LocationUpdate(device: "phone", time: date(3100), latitude: 49, longitude: 2))
        #expect(exit.map(\.event.kind) == [.exit])
        #expect(exit.first?.event.visitID == entry.first?.event.visitID)
    }

    @Test("events keep the fence's name, group, properties and message they were logged with: after edits, removal and a restart",
          arguments: StoreKind.allCases)
    func eventsKeepTheirFence(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        var service = try harness.service(GeofencingOptions())
        let first = circle("park", latitude: 48, longitude: 2, radius: 500, group: "parks",
                           extra: ["name": "Meadow", "perimeter:message": "{device} {event} {name} ({colour})", "colour": "green"])
        try service.addFeature(first)
        let entry = try service.process(LocationUpdate(device: "phone", time: date(0), latitude: 48, longitude: 2))
        #expect(entry.count == 1)
        #expect(entry.first?.fenceName == "Meadow" && entry.first?.group == "parks")
        #expect(entry.first?.properties == first.properties)
        #expect(entry.first?.message == "phone entry Meadow (green)")

        // Edited: the next event has the new labels, the logged one keeps the old.
        let second = circle("park", latitude: 48, longitude: 2, radius: 500,
                            extra: ["name": "Old Meadow", "colour": "brown"])
        try service.addFeature(second)
        let exit = try service.process(LocationUpdate(device: "phone", time: date(60), latitude: 49, longitude: 2))
        #expect(exit.map(\.event.kind) == [.exit])
        #expect(exit.first?.fenceName == "Old Meadow" && exit.first?.group == nil && exit.first?.message == nil)
        #expect(exit.first?.properties == second.properties)

        try service.removeFeature(id: "park")
        service = try harness.service(GeofencingOptions())
        let logged = try service.loggedEvents(after: 0)
        #expect(logged == entry + exit, "stored with the event, not looked up")
        #expect(logged.first?.feature.properties["colour"] == "green")
    }

    @Test("consent and removed features survive a restart", arguments: StoreKind.allCases)
    func consentAndRemovalPersist(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        var service = try harness.service()
        try service.addFeatures([circle("a", latitude: 48, longitude: 2, radius: 100, group: "x"),
                                 circle("b", latitude: 48, longitude: 2, radius: 200, group: "y")])
        try service.process(LocationUpdate(device: "d", time: date(0), latitude: 48, longitude: 2))
        try service.removeFeature(id: "a")
        try service.setUserConsent(false, for: "d")
        service = try harness.service()
        #expect(try service.features().map(\.id) == [.string("b")])
        #expect(try service.userConsent(for: "d") == false)
        #expect(try service.deviceStatus(of: "d").presence.map(\.fence) == ["b"])
        // Re-adding "a" is a new fence: the device inside gets a fresh entry on its next update.
        try service.addFeature(circle("a", latitude: 48, longitude: 2, radius: 100))
        try service.setUserConsent(true, for: "d")
        let events = try service.process(LocationUpdate(device: "d", time: date(5), latitude: 48, longitude: 2))
        #expect(events.map { "\($0.event.kind):\($0.event.fence)" } == ["entry:a"])
    }
}
