import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import Testing

/// One test per rule of the default semantics (docs/semantics.md).
@Suite("Default semantics")
struct DefaultSemanticsTests {
    @Test("a device already inside on its first update gets an entry (unknown → entry)")
    func unknownToEntry() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        #expect(summary(engine.process(update(10, 0.5, 0.5))) == ["entry a @10"])
        #expect(engine.process(update(11, 0.6, 0.6)).isEmpty)
    }

    @Test("a device outside on its first update gets nothing, then entry and exit as it crosses")
    func outsideThenCross() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        #expect(engine.process(update(0, 5, 5)).isEmpty)
        #expect(summary(engine.process(update(1, 0.5, 0.5))) == ["entry a @1"])
        let exit = engine.process(update(4, 5, 5))
        #expect(summary(exit) == ["exit a @4"])
        #expect(exit.first?.timeInside == 3)
    }

    @Test("within one update: dwells (by time, then id), then exits (by id), then entries (by id)")
    func orderingWithinAnUpdate() {
        var engine = DetectionEngine(fences: [
            square("b", lat: 0, lon: 0, dwell: 5), square("a", lat: 0, lon: 0, dwell: 15),
            square("z", lat: 0, lon: 0, dwell: 5), square("d", lat: 10, lon: 10), square("c", lat: 10, lon: 10),
        ])
        #expect(summary(engine.process(update(0, 0.5, 0.5))) == ["entry a @0", "entry b @0", "entry z @0"])
        #expect(summary(engine.process(update(20, 10.5, 10.5))) == [
            "dwell b @5", "dwell z @5", "dwell a @15",
            "exit a @20", "exit b @20", "exit z @20",
            "entry c @20", "entry d @20",
        ])
    }

    @Test("an update older than the device's last is rejected, counted and changes nothing; equal times are accepted")
    func outOfOrderRejected() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        var events: [GeofenceEvent] = []
        #expect(engine.process(update(10, 5, 5), into: &events) == nil)
        let rejection = engine.process(update(9, 0.5, 0.5), into: &events)
        #expect(rejection == .outOfOrder(device: "d", time: Date(timeIntervalSince1970: 9),
                                         lastAccepted: Date(timeIntervalSince1970: 10)))
        #expect(events.isEmpty)
        #expect(engine.statistics.rejectedUpdates == 1)
        #expect(engine.statistics.acceptedUpdates == 1)
        #expect(engine.presence(of: "d").isEmpty)
        #expect(engine.lastUpdateTime(of: "d") == Date(timeIntervalSince1970: 10))
        #expect(summary(engine.process(update(10, 0.5, 0.5))) == ["entry a @10"])
        // Other devices are independent.
        #expect(summary(engine.process(update("other", 1, 0.5, 0.5))) == ["entry a @1"])
    }

    @Test("invalid positions are rejected and counted", arguments: [
        (Double.nan, 0.0), (0.0, Double.infinity), (90.5, 0.0), (-91.0, 10.0),
    ])
    func invalidPositions(lat: Double, lon: Double) {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        var events: [GeofenceEvent] = []
        let rejection = engine.process(update(1, lat, lon), into: &events)
        #expect(rejection != nil)
        #expect(engine.statistics.rejectedUpdates == 1)
        #expect(engine.knownDevices.isEmpty)
    }

    @Test("update times outside 1970…2200 are rejected, naming the value; the bounds are exact", arguments: [
        (0.0, true), (-0.001, false), (7_258_118_399.999, true), (7_258_118_400, false), (1e18, false),
        (1_700_000_000_000, false), (-1e10, false), (.nan, false), (.infinity, false), (-.infinity, false),
    ])
    func updateTimeRange(seconds: Double, accepted: Bool) {
        for configuration in [DetectionEngine.Configuration(), .init(options: DetectionOptions(crossings: true), deduplicate: true)] {
            var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)], configuration: configuration)
            var events: [GeofenceEvent] = []
            let input = update(seconds, 0.5, 0.5)
            let rejection = engine.process(input, into: &events)
            #expect((rejection == nil) == accepted)
            #expect(events.isEmpty != accepted)
            guard let rejection else { continue }
            #expect(rejection == .invalidTime(device: "d", time: input.time.timeIntervalSince1970) || seconds.isNaN)
            #expect(engine.knownDevices.isEmpty)
            #expect(rejection.description.contains("\(input.time.timeIntervalSince1970)"), "\(rejection)")
            #expect(rejection.description.contains("1970-01-01T00:00:00Z to 2200-01-01T00:00:00Z") || !seconds.isFinite)
        }
        #expect(LocationUpdate.timeProblem(1_700_000_000_000)?.contains("milliseconds") == true)
        #expect(LocationUpdate.timeProblem(-100)?.contains("(1969-12-31T23:58:20.000Z)") == true)
    }

    @Test("dwell fires at exactly entry + dwell time, not a moment before")
    func dwellAtExactTime() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 60)])
        #expect(summary(engine.process(update(100, 0.5, 0.5))) == ["entry a @100"])
        #expect(engine.process(update(159.999, 0.5, 0.5)).isEmpty)
        #expect(summary(engine.process(update(160, 0.5, 0.5))) == ["dwell a @160"])
        #expect(engine.process(update(500, 0.5, 0.5)).isEmpty, "dwell fires once per visit")
        #expect(engine.presence(of: "d").first?.hasDwelled == true)
    }

    @Test("dwell due during a silence fires on the next update with its own time, before the exit")
    func dwellAfterSilence() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 60)])
        _ = engine.process(update(0, 0.5, 0.5))
        #expect(summary(engine.process(update(1000, 5, 5))) == ["dwell a @60", "exit a @1000"])
    }

    @Test("nothing fires past the last update until the clock is advanced; advance fires due dwells once")
    func advanceFiresDwells() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 60), square("b", lat: 0, lon: 0, dwell: 30)])
        _ = engine.process(update("d2", 5, 0.5, 0.5))
        _ = engine.process(update("d1", 0, 0.5, 0.5))
        #expect(engine.advance(to: Date(timeIntervalSince1970: 29)).isEmpty)
        #expect(summaryWithDevice(engine.advance(to: Date(timeIntervalSince1970: 65))) == [
            "dwell d1 b @30", "dwell d2 b @35", "dwell d1 a @60", "dwell d2 a @65",
        ])
        #expect(engine.advance(to: Date(timeIntervalSince1970: 1000)).isEmpty)
        #expect(engine.process(update("d1", 2000, 0.5, 0.5)).isEmpty)
        let advanced = engine.advance(to: Date(timeIntervalSince1970: 65))
        #expect(advanced.isEmpty)
    }

    @Test("a dwell timer of a visit that ended does not fire; a new visit dwells again")
    func dwellPerVisit() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 60)])
        _ = engine.process(update(0, 0.5, 0.5))
        _ = engine.process(update(10, 5, 5))
        _ = engine.process(update(20, 0.5, 0.5))
        #expect(engine.advance(to: Date(timeIntervalSince1970: 79)).isEmpty)
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 80))) == ["dwell a @80"])
    }

    @Test("adding a fence makes presence unknown: a device inside gets an entry on its next update")
    func fenceAdded() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        _ = engine.process(update(0, 0.5, 0.5))
        engine.upsert(square("b", lat: 0, lon: 0, size: 2))
        #expect(summary(engine.process(update(1, 0.5, 0.5))) == ["entry b @1"])
    }

    @Test("changing a fence keeps presence (no new entry) and re-evaluates on the next update")
    func fenceChanged() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, size: 2)])
        let entry = engine.process(update(0, 1.5, 1.5))
        engine.upsert(square("a", lat: 0, lon: 0, size: 3))
        #expect(engine.process(update(1, 1.5, 1.5)).isEmpty)
        engine.upsert(square("a", lat: 0, lon: 0, size: 1))
        let exit = engine.process(update(2, 1.5, 1.5))
        #expect(summary(exit) == ["exit a @2"])
        #expect(exit.first?.visitID == entry.first?.visitID, "the visit continues across the change")
    }

    @Test("changing a fence's dwell time reschedules pending dwells")
    func fenceDwellChanged() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 100)])
        _ = engine.process(update(0, 0.5, 0.5))
        engine.upsert(square("a", lat: 0, lon: 0, dwell: 10))
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 50))) == ["dwell a @10"])
    }

    @Test("removing a fence drops presence and emits nothing; adding it again is a new entry")
    func fenceRemoved() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 10), square("b", lat: 0, lon: 0)])
        _ = engine.process(update(0, 0.5, 0.5))
        #expect(engine.remove(id: "a") != nil)
        #expect(engine.remove(id: "a") == nil)
        #expect(engine.process(update(1, 5, 5)).map(\.fence) == ["b"])
        #expect(engine.advance(to: Date(timeIntervalSince1970: 100)).isEmpty)
        #expect(engine.presence(of: "d").isEmpty)
        engine.upsert(square("a", lat: 0, lon: 0))
        #expect(summary(engine.process(update(2, 0.5, 0.5))) == ["entry a @2", "entry b @2"])
    }

    @Test("removing a fence while a device is inside emits no exit later")
    func removedWhileInside() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)])
        _ = engine.process(update(0, 0.5, 0.5))
        engine.remove(id: "a")
        #expect(engine.process(update(1, 5, 5)).isEmpty)
    }

    @Test("the run-wide default dwell applies to fences that set none")
    func defaultDwell() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0), square("b", lat: 0, lon: 0, dwell: 5)],
                                     configuration: .init(defaultDwellTime: 20))
        _ = engine.process(update(0, 0.5, 0.5))
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 100))) == ["dwell b @5", "dwell a @20"])
    }

    @Test("a fence emits only the events it asks for, but tracks presence all the same")
    func eventSubset() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 5, events: [.exit])])
        #expect(engine.process(update(0, 0.5, 0.5)).isEmpty)
        #expect(engine.process(update(10, 0.5, 0.5)).isEmpty)
        #expect(summary(engine.process(update(20, 5, 5))) == ["exit a @20"])
    }

    @Test("an expired fence reports nothing and drops presence silently")
    func expiry() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, expiresAt: Date(timeIntervalSince1970: 100))])
        #expect(summary(engine.process(update(0, 0.5, 0.5))) == ["entry a @0"])
        #expect(engine.process(update(100, 5, 5)).isEmpty)
        #expect(engine.process(update(200, 0.5, 0.5)).isEmpty)
    }

    @Test("entry, dwell and exit of one visit share a visit id; ids are unique and deterministic")
    func identifiers() {
        func run() -> [GeofenceEvent] {
            var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0, dwell: 5), square("b", lat: 0, lon: 0)])
            var events: [GeofenceEvent] = []
            for (t, lat) in [(0.0, 0.5), (10, 5), (10, 0.5), (10, 5), (10, 0.5), (30, 5)] {
                engine.process(update(t, lat, lat), into: &events)
            }
            return events
        }
        let first = run(), second = run()
        #expect(first == second)
        #expect(Set(first.map(\.id)).count == first.count)
        let visitsOfA = Dictionary(grouping: first.filter { $0.fence == "a" }, by: \.visitID)
        #expect(visitsOfA.count == 3, "two visits entered at t=10 by the same device are still distinct")
        for (_, events) in visitsOfA {
            #expect(events.first?.kind == .entry)
            #expect(events.last?.kind == .exit)
        }
        #expect(first.allSatisfy { $0.id.count == 32 && $0.visitID.count == 32 })
    }

    @Test("crossing the antimeridian inside a fence split at ±180 gives no exit and no entry")
    func antimeridian() {
        let east = [Coordinate(latitude: -20, longitude: 170), Coordinate(latitude: -20, longitude: 180),
                    Coordinate(latitude: -10, longitude: 180), Coordinate(latitude: -10, longitude: 170),
                    Coordinate(latitude: -20, longitude: 170)]
        let west = [Coordinate(latitude: -20, longitude: -180), Coordinate(latitude: -20, longitude: -170),
                    Coordinate(latitude: -10, longitude: -170), Coordinate(latitude: -10, longitude: -180),
                    Coordinate(latitude: -20, longitude: -180)]
        let fiji = Fence(id: "fiji", region: Region(.polygons([Polygon(rings: [east]), Polygon(rings: [west])])))
        var engine = DetectionEngine(fences: [fiji])
        #expect(summary(engine.process(update(0, -15, 179.5))) == ["entry fiji @0"])
        #expect(engine.process(update(1, -15, 180)).isEmpty)
        #expect(engine.process(update(2, -15, -180)).isEmpty)
        #expect(engine.process(update(3, -15, -179.5)).isEmpty)
        #expect(engine.process(update(4, -15, 179.9)).isEmpty)
        #expect(summary(engine.process(update(5, -15, -160))) == ["exit fiji @5"])
    }

    @Test("presence lists the fences a device is inside, since when, and whether dwell fired")
    func presenceQuery() {
        var engine = DetectionEngine(fences: [square("b", lat: 0, lon: 0, dwell: 5), square("a", lat: 0, lon: 0)])
        _ = engine.process(update(3, 0.5, 0.5))
        _ = engine.process(update(9, 0.5, 0.5))
        let presence = engine.presence(of: "d")
        #expect(presence.map(\.fence) == ["a", "b"])
        #expect(presence.map(\.since) == [Date(timeIntervalSince1970: 3), Date(timeIntervalSince1970: 3)])
        #expect(presence.map(\.hasDwelled) == [false, true])
        #expect(engine.presence(of: "nobody").isEmpty)
    }
}
