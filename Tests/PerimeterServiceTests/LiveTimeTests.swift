import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import PerimeterTestSupport
import PerimeterTracks
import Testing

/// The live time model (docs/semantics.md, "Time in the live service"), rule by rule, on a
/// ``ManualClock`` that moves only when the test says so and a service that ticks only when asked.
@Suite("Live time: the service's own clock")
struct LiveTimeTests {
    /// 2026-06-01T08:00:00Z, where the manual clock starts.
    static let t0 = 1_780_300_800.0

    static func live(lateness: Double = 5, skew: Double = 60, dwell: Double? = 30,
                     store: any GeofencingStore = InMemoryGeofencingStore()) throws -> (GeofencingService, ManualClock) {
        let clock = ManualClock(date(t0))
        let service = GeofencingService(store: store, clock: clock, tickInterval: nil)
        try service.configure(GeofencingOptions(defaultDwellTime: dwell, allowedLateness: lateness, maximumFutureSkew: skew))
        try service.addFeature(circle("yard", latitude: 46.95, longitude: 7.44, radius: 200))
        return (service, clock)
    }

    static func at(_ device: DeviceID, _ seconds: Double, inside: Bool = true) -> LocationUpdate {
        LocationUpdate(device: device, time: date(t0 + seconds), latitude: inside ? 46.95 : 47.5, longitude: 7.44)
    }

    @Test("a silent device's dwell fires on the clock once due time + lateness has passed, not before")
    func silentDeviceDwells() throws {
        let (service, clock) = try Self.live()
        #expect(try service.process(Self.at("van", 0)).map(\.event.kind) == [.entry])
        clock.advance(by: 34)  // due at +30; +30 + 5 s lateness not reached
        #expect(try service.tick().isEmpty)
        clock.advance(by: 1)
        let fired = try service.tick()
        #expect(fired.map(\.event.kind) == [.dwell])
        #expect(fired.first?.event.time == date(Self.t0 + 30), "the dwell is dated when it fell due")
        #expect(try service.tick().isEmpty, "a timer fires once")
        #expect(service.timeStatistics.clockEvents == 1)
    }

    @Test("one device's timestamps never move time for another device")
    func devicesDoNotMoveEachOther() throws {
        let (service, _) = try Self.live()
        try service.process(Self.at("a", 0))
        // b reports 59 s later (within the skew): on the data clock this would fire a's dwell (due +30).
        let events = try service.process(Self.at("b", 59))
        #expect(events.map(\.event.device) == ["b"])
        #expect(try service.tick().isEmpty, "the clock has not moved: nothing is due")
        #expect(try service.deviceStatus(of: "a").presence.first?.hasDwelled == false)
    }

    @Test("an update dated beyond the allowed skew is refused with the service's time, changes nothing; the next good one is accepted")
    func futureUpdatesAreRefused() throws {
        let (service, clock) = try Self.live()
        try service.process(Self.at("phone", 0))
        let future = LocationUpdate(device: "phone", time: date(4_102_444_800), latitude: 46.95, longitude: 7.44)  // 2100-01-01
        let result = try service.process([future, Self.at("other", 1)])
        #expect(result.rejections.map(\.index) == [0])
        let error = try #require(result.rejections.first?.error)
        #expect(error.code == .futureUpdate)
        #expect(error.device == "phone")
        #expect(error.message.contains("2100-01-01T00:00:00"), "\(error.message)")
        #expect(error.message.contains("2026-06-01T08:00:00"), "names the service's time: \(error.message)")
        #expect(error.message.contains("years ahead"), "\(error.message)")
        #expect(try service.deviceStatus(of: "phone").lastUpdateTime == date(Self.t0), "unchanged")
        #expect(service.timeStatistics.futureUpdates == 1)
        // Just inside the skew is accepted; the device's next real-time update too.
        clock.advance(by: 10)
        #expect(throws: Never.self) { try service.process(Self.at("phone", 70)) }
        #expect(try service.deviceStatus(of: "phone").lastUpdateTime == date(Self.t0 + 70))
        // Nothing fired for anyone because of the refused update.
        #expect(try service.tick().isEmpty)
    }

    @Test("late data: an update dated before a timer the clock already fired is evaluated as of that timer")
    func lateUpdateAfterAFiredTimer() throws {
        let (service, clock) = try Self.live()
        try service.process(Self.at("van", 0))
        clock.advance(by: 40)
        #expect(try service.tick().map(\.event.kind) == [.dwell])  // at +30, without a fix
        // The phone comes out of a tunnel: its buffered fix at +10 shows it had already left.
        let late = try service.process(Self.at("van", 10, inside: false))
        #expect(late.map(\.event.kind) == [.exit])
        #expect(late.first?.event.time == date(Self.t0 + 30), "never before the dwell that was already reported")
        #expect(late.first?.event.timeInside == 30)
        #expect(service.timeStatistics.lateUpdates == 1)
        // Later updates are ordinary again.
        #expect(try service.process(Self.at("van", 50)).map(\.event.kind) == [.entry])
    }

    @Test("a device still uploading is left to its own updates: the clock waits until it has been quiet for the lateness")
    func busyDevicesAreHeld() throws {
        let (service, clock) = try Self.live()
        clock.advance(by: 3600)  // the data below is an hour old: a backlog
        try service.process([Self.at("phone", 0), Self.at("phone", 10)])
        clock.advance(by: 1)
        #expect(try service.tick().isEmpty, "1 s after its last request the phone may still be uploading")
        // The next request shows it left before its dwell was due: no dwell, as in a replay.
        #expect(try service.process(Self.at("phone", 20, inside: false)).map(\.event.kind) == [.exit])
        try service.process(Self.at("phone", 25))  // back inside: dwell due at +55
        clock.advance(by: 4)
        #expect(try service.tick().isEmpty)
        clock.advance(by: 1.5)
        #expect(try service.tick().map(\.event.kind) == [.dwell], "quiet for the lateness: the clock takes over")
    }

    @Test("a backlog uploaded in requests gets exactly the events of a replay of the same fixes (real track)",
          .enabled(if: Fixtures.available), arguments: [1, 3])
    func backlogEqualsReplay(shards: Int) throws {
        let bytes = try Fixtures.data("tracks/gpx/devices/bike.gpx")
        let track = try TrackReader(device: "bike").read(Array(bytes), source: "bike.gpx").updates
        #expect(track.count > 500)
        // Circles along the ride, every 150th fix, with a 30 s dwell: entries, dwells and exits.
        let features = stride(from: 0, to: track.count, by: 150).map { index in
            circle("c\(index)", latitude: track[index].coordinate.latitude, longitude: track[index].coordinate.longitude,
                   radius: 60, dwell: 30)
        }
        var engine = DetectionEngine(fences: FenceLoaderHelper.fences(features))
        let replay = engine.replay(track)
        #expect(replay.events.contains { $0.kind == .dwell } && replay.events.contains { $0.kind == .exit })

        let clock = ManualClock(track.last!.time.addingTimeInterval(6 * 3600))  // uploaded six hours later
        let service = GeofencingService(clock: clock, tickInterval: nil)
        try service.configure(GeofencingOptions(shards: shards))
        try service.addFeatures(features)
        var live: [GeofenceEvent] = []
        for start in stride(from: 0, to: track.count, by: 97) {
            live += try service.process(Array(track[start..<min(start + 97, track.count)])).events.map(\.event)
            clock.advance(by: 0.3)  // the next request follows at once, while the clock ticks
            live += try service.tick().map(\.event)
        }
        #expect(live == replay.events)
        // Once the phone is quiet, the clock fires what is still due, as advancing the replay would.
        clock.advance(by: 5)
        let rest = try service.tick().map(\.event)
        #expect(rest == engine.advance(to: clock.now().addingTimeInterval(-5)))
    }

    @Test("the clock fires option timers without a fix too: a debounced entry, a staleness exit, a reorder release")
    func optionTimersOnTheClock() throws {
        let clock = ManualClock(date(Self.t0))
        let service = GeofencingService(clock: clock, tickInterval: nil)
        try service.configure(GeofencingOptions(defaultDwellTime: nil, allowedLateness: 5,
                                                detectionOptions: DetectionOptions(entryDelay: 10, staleAfter: 60, exitOnStale: true),
                                                reorderWindow: 20))
        try service.addFeature(circle("yard", latitude: 46.95, longitude: 7.44, radius: 200))
        // Buffered by the reorder window: nothing until the clock releases it at +20, once +20 + 5 s
        // lateness has passed; its entry's 10 s confirmation (due +10) is then already due as well.
        #expect(try service.process(Self.at("van", 0)).isEmpty)
        clock.advance(by: 24)
        #expect(try service.tick().isEmpty)
        clock.advance(by: 2)
        let entry = try service.tick()
        #expect(entry.map(\.event.kind) == [.entry])
        #expect(entry.first?.event.time == date(Self.t0))
        clock.advance(by: 38)  // +64: silent since +0, stale at +60; not before +65
        #expect(try service.tick().isEmpty)
        clock.advance(by: 1.5)
        let stale = try service.tick()
        #expect(stale.map(\.event.kind) == [.exit])
        #expect(stale.first?.event.reason == .timeout)
        #expect(service.timeStatistics.clockEvents == 2)
    }

    @Test("a schedule window that closes and a fence that expires take effect on the clock, without a fix")
    func scheduleAndExpiryOnTheClock() throws {
        // t0 is Monday 08:00 UTC. "closing" is open until 08:01 (+60 s); "expiring" expires at +20 s.
        // With a 90 s dwell, only "control" may ever dwell: the others are gone before it falls due.
        let clock = ManualClock(date(Self.t0))
        let service = GeofencingService(clock: clock, tickInterval: nil)
        try service.configure(GeofencingOptions(defaultDwellTime: 90, allowedLateness: 5))
        try service.addFeature(circle("closing", latitude: 46.95, longitude: 7.44, radius: 200,
                                      extra: ["perimeter:schedule": .string("Mon 07:00-08:01 UTC")]))
        try service.addFeature(circle("expiring", latitude: 46.95, longitude: 7.44, radius: 200,
                                      extra: ["perimeter:expires": .string("2026-06-01T08:00:20Z")]))
        try service.addFeature(circle("control", latitude: 46.95, longitude: 7.44, radius: 200))
        func inside() throws -> Set<FenceID> {
            Set(try service.deviceStatus(of: "van").presence.map(\.fence))
        }
        #expect(Set(try service.process(Self.at("van", 0)).map(\.event.fence)) == ["closing", "expiring", "control"])
        clock.advance(by: 24)  // the fence expired at +20, but +20 + 5 s lateness has not passed
        #expect(try service.tick().isEmpty)
        #expect(try inside() == ["closing", "expiring", "control"])
        clock.advance(by: 2)
        #expect(try service.tick().isEmpty, "an expired fence drops presence silently")
        #expect(try inside() == ["closing", "control"])
        clock.advance(by: 38)  // +64: the window closed at +60, lateness not yet passed
        #expect(try service.tick().isEmpty)
        #expect(try inside() == ["closing", "control"])
        clock.advance(by: 2)  // +66
        #expect(try service.tick().isEmpty, "a closing window resets presence silently")
        #expect(try inside() == ["control"])
        clock.advance(by: 30)  // +96: the dwell fell due at +90
        let fired = try service.tick()
        #expect(fired.map(\.event.fence) == ["control"])
        #expect(fired.map(\.event.kind) == [.dwell])
    }

    @Test("a simulated device keeps its own clock: far-future times accepted, nobody else moved")
    func simulatedDevicesRunOnTheirOwnClock() throws {
        let (service, _) = try Self.live()
        try service.process(Self.at("real", 0))
        let result = try service.processSimulated([Self.at("sim", 3600), Self.at("sim", 3700)])
        #expect(result.rejections.isEmpty)
        #expect(result.events.map(\.event.kind) == [.entry, .dwell])
        // Its parked time passes on its own clock only.
        #expect(try service.advance("sim", to: date(Self.t0 + 7200)).isEmpty)
        #expect(try service.deviceStatus(of: "real").presence.first?.hasDwelled == false)
        #expect(try service.tick().isEmpty)
    }

    @Test("advance(device:to:) fires that device's timers only")
    func advanceOneDevice() throws {
        let (service, _) = try Self.live()
        try service.process([Self.at("a", 0), Self.at("b", 0)])
        let fired = try service.advance("a", to: date(Self.t0 + 100))
        #expect(fired.map(\.event.device) == ["a"])
        #expect(fired.map(\.event.kind) == [.dwell])
        #expect(try service.deviceStatus(of: "b").presence.first?.hasDwelled == false)
    }

    @Test("forgetting a device: exits with reason reset on request, state gone from memory and store, next update starts afresh",
          arguments: StoreKind.allCases)
    func forgetDevice(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        let clock = ManualClock(date(Self.t0 + 100))
        var service = GeofencingService(store: try harness.open(), clock: clock, tickInterval: nil)
        try service.configure(GeofencingOptions(defaultDwellTime: 30))
        try service.addFeature(circle("yard", latitude: 46.95, longitude: 7.44, radius: 200))
        try service.process([Self.at("van", 0), Self.at("car", 0)])
        let exits = try service.forget(device: "van", emittingExits: true)
        #expect(exits.map(\.event.kind) == [.exit])
        #expect(exits.first?.event.reason == .reset)
        #expect(exits.first?.event.time == date(Self.t0 + 100), "dated by the service's clock")
        #expect(try service.deviceStatus(of: "van").lastUpdateTime == nil)
        #expect(throws: GeofencingError.self) { try service.forget(device: "van") }
        #expect(try service.forget(device: "car").isEmpty, "without exits nothing is logged")

        try service.close()
        service = GeofencingService(store: try harness.open(), clock: clock, tickInterval: nil)
        try service.configure(GeofencingOptions(defaultDwellTime: 30))
        #expect(try service.deviceStatus(of: "van").lastUpdateTime == nil, "forgotten in the store too")
        #expect(try service.deviceStatus(of: "car").presence.isEmpty)
        #expect(try service.process(Self.at("van", 50)).map(\.event.kind) == [.entry], "a new device")
        do {
            try service.forget(device: "nobody")
            Issue.record("expected deviceNotFound")
        } catch {
            #expect(error.code == .deviceNotFound)
        }
    }

    @Test("the service's own ticker fires a silent device's dwell without being asked")
    func tickerRunsByItself() throws {
        let clock = ManualClock(date(Self.t0))
        let service = GeofencingService(clock: clock, tickInterval: 0.02)
        try service.configure(GeofencingOptions(defaultDwellTime: 30, allowedLateness: 1))
        try service.addFeature(circle("yard", latitude: 46.95, longitude: 7.44, radius: 200))
        let observer = RecordingObserver()
        service.addObserver(observer)
        try service.process(Self.at("van", 0))
        clock.advance(by: 31)
        #expect(waitUntil(seconds: 5) { observer.events.contains { $0.event.kind == .dwell } })
        try service.close()
    }
}
