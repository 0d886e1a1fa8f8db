import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import Testing

/// One test per rule of the options (docs/semantics.md, "Options").
@Suite("Options: accuracy and hysteresis")
struct AccuracyOptionTests {
    let m11 = degrees(metres: 11.1), m111 = degrees(metres: 111)

    @Test("conservative: enter only when the accuracy disc is inside, exit only when it is wholly outside")
    func conservative() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0), .init(accuracy: .conservative))])
        #expect(engine.process(update(0, 0.5, 1 + m111, accuracy: 50)).isEmpty)
        #expect(engine.process(update(1, 0.5, 1 - m11, accuracy: 50)).isEmpty, "disc straddles the edge: no entry")
        #expect(summary(engine.process(update(2, 0.5, 1 - m111, accuracy: 50))) == ["entry a @2"])
        #expect(engine.process(update(3, 0.5, 1 + m11, accuracy: 50)).isEmpty, "disc straddles the edge: no exit")
        #expect(engine.presence(of: "d").map(\.fence) == ["a"])
        #expect(summary(engine.process(update(4, 0.5, 1 + m111, accuracy: 50))) == ["exit a @4"])
    }

    @Test("conservative without accuracy on the fix: the point decides, or the hysteresis when set")
    func conservativeFallback() {
        var plain = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0), .init(accuracy: .conservative))])
        #expect(summary(plain.process(update(0, 0.5, 1 - m11, accuracy: nil))) == ["entry a @0"])
        var withHysteresis = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0),
                                                           .init(accuracy: .conservative, hysteresis: 50))])
        #expect(withHysteresis.process(update(0, 0.5, 1 - m11, accuracy: nil)).isEmpty)
        #expect(summary(withHysteresis.process(update(1, 0.5, 1 - m11, accuracy: 5))) == ["entry a @1"],
                "a fix's own accuracy wins over the hysteresis")
    }

    @Test("hysteresis: a band of that width either side of the boundary keeps the current presence")
    func hysteresis() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)],
                                     configuration: .init(options: .init(hysteresis: 50)))
        #expect(summary(engine.process(update(0, 0.5, 1 - m111, accuracy: 500))) == ["entry a @0"],
                "accuracy is ignored unless conservative")
        for (t, lon) in [(1.0, 1 + m11), (2, 1 - m11), (3, 1 + m11 * 4)] {
            #expect(engine.process(update(t, 0.5, lon, accuracy: nil)).isEmpty, "inside the band at \(t)")
        }
        #expect(summary(engine.process(update(4, 0.5, 1 + m111, accuracy: nil))) == ["exit a @4"])
        #expect(engine.process(update(5, 0.5, 1 - m11, accuracy: nil)).isEmpty)
    }

    @Test("circles and corridors: the disc is compared with radius ± accuracy")
    func circleDisc() {
        let centre = Coordinate(latitude: 0, longitude: 0)
        let circle = Fence(id: "c", region: Region(.circle(center: centre, radius: 100)), options: .init(hysteresis: 30))
        var engine = DetectionEngine(fences: [circle])
        #expect(engine.process(update(0, 0, degrees(metres: 80))).isEmpty, "80 m from the centre: within 30 m of the rim")
        #expect(summary(engine.process(update(1, 0, degrees(metres: 60)))) == ["entry c @1"])
        #expect(engine.process(update(2, 0, degrees(metres: 120))).isEmpty)
        #expect(summary(engine.process(update(3, 0, degrees(metres: 140)))) == ["exit c @3"])
    }

    @Test("maximum accuracy: worse fixes change no presence but are accepted and move the clock")
    func maximumAccuracy() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, dwell: 5), .init(maximumAccuracy: 100))])
        #expect(engine.process(update(0, 0.5, 0.5, accuracy: 500)).isEmpty)
        #expect(engine.statistics.acceptedUpdates == 1)
        #expect(summary(engine.process(update(1, 0.5, 0.5, accuracy: 20))) == ["entry a @1"])
        #expect(summary(engine.process(update(7, 5, 5, accuracy: 900))) == ["dwell a @6"], "dwells still fall due; no exit")
        #expect(summary(engine.process(update(8, 5, 5, accuracy: nil))) == ["exit a @8"])
    }
}

@Suite("Options: time debounce")
struct DebounceOptionTests {
    @Test("an entry is confirmed once the inside presence has held for the entry delay; its time is the first fix")
    func entryDelay() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0), .init(entryDelay: 30))])
        #expect(engine.process(update(0, 5, 5)).isEmpty)
        #expect(engine.process(update(10, 0.5, 0.5)).isEmpty)
        #expect(engine.process(update(20, 0.5, 0.5)).isEmpty)
        #expect(engine.presence(of: "d").isEmpty, "not confirmed yet")
        let events = engine.process(update(45, 0.5, 0.5))
        #expect(summary(events) == ["entry a @10"])
        #expect(events.first?.observedAt == Date(timeIntervalSince1970: 10))
        #expect(engine.presence(of: "d").first?.since == Date(timeIntervalSince1970: 10))
    }

    @Test("a confirmation that falls due during a silence fires on advance(to:)")
    func confirmationOnAdvance() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0), .init(entryDelay: 30))])
        _ = engine.process(update(10, 0.5, 0.5))
        #expect(engine.advance(to: Date(timeIntervalSince1970: 39)).isEmpty)
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 40))) == ["entry a @10"])
        #expect(engine.advance(to: Date(timeIntervalSince1970: 400)).isEmpty)
    }

    @Test("a flap shorter than the delay is no transition at all")
    func flapCancelled() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0), .init(entryDelay: 30, exitDelay: 60))])
        #expect(engine.process(update(0, 5, 5)).isEmpty)
        #expect(engine.process(update(10, 0.5, 0.5)).isEmpty)
        #expect(engine.process(update(20, 5, 5)).isEmpty, "cancelled")
        #expect(engine.advance(to: Date(timeIntervalSince1970: 500)).isEmpty)
        #expect(summary(engine.process(update(600, 0.5, 0.5))) == [])
        #expect(summary(engine.process(update(630, 0.5, 0.5))) == ["entry a @600"])
        #expect(engine.process(update(640, 5, 5)).isEmpty)
        #expect(engine.process(update(650, 0.5, 0.5)).isEmpty, "exit cancelled")
        #expect(engine.process(update(660, 5, 5)).isEmpty)
        let exit = engine.advance(to: Date(timeIntervalSince1970: 720))
        #expect(summary(exit) == ["exit a @660"])
        #expect(exit.first?.timeInside == 60)
    }

    @Test("a dwell due while an exit is pending waits: it fires if the exit is cancelled, never if confirmed")
    func dwellHeldByPendingExit() {
        let fence = with(square("a", lat: 0, lon: 0, dwell: 15), .init(exitDelay: 60))
        var back = DetectionEngine(fences: [fence])
        #expect(summary(back.process(update(0, 0.5, 0.5))) == ["entry a @0"])
        #expect(back.process(update(10, 5, 5)).isEmpty)
        #expect(summary(back.process(update(20, 0.5, 0.5))) == ["dwell a @15"])

        var gone = DetectionEngine(fences: [fence])
        _ = gone.process(update(0, 0.5, 0.5))
        _ = gone.process(update(10, 5, 5))
        #expect(summary(gone.advance(to: Date(timeIntervalSince1970: 100))) == ["exit a @10"])
    }
}

@Suite("Options: crossings and interpolation")
struct CrossingOptionTests {
    @Test("a straight path between two outside fixes through a polygon gives a cross with the time of passage")
    func polygonCross() throws {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, size: 0.01), .init(crossings: true))])
        #expect(engine.process(update(0, 0.005, -0.01)).isEmpty)
        let events = engine.process(update(60, 0.005, 0.02))
        #expect(summary(events) == ["cross a @20"])
        let cross = try #require(events.first)
        #expect(abs(cross.time.timeIntervalSince1970 - 20) < 1e-6)
        #expect(abs((cross.timeInside ?? 0) - 20) < 1e-6)
        #expect(cross.observedAt == Date(timeIntervalSince1970: 60))
        #expect(abs(cross.coordinate.longitude) < 1e-9)
        #expect(engine.presence(of: "d").isEmpty, "a crossing leaves the device outside")
    }

    @Test("no cross when the gap exceeds the maximum, when the path misses, or when the fence does not report it")
    func noCross() {
        var far = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, size: 0.01), .init(crossings: true, maximumGap: 100))])
        _ = far.process(update(0, 0.005, -0.01))
        #expect(far.process(update(101, 0.005, 0.02)).isEmpty)
        var miss = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, size: 0.01), .init(crossings: true))])
        _ = miss.process(update(0, 0.02, -0.01))
        #expect(miss.process(update(60, 0.02, 0.02)).isEmpty)
        var quiet = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, size: 0.01, events: [.entry, .exit]),
                                                  .init(crossings: true))])
        _ = quiet.process(update(0, 0.005, -0.01))
        #expect(quiet.process(update(60, 0.005, 0.02)).isEmpty)
        var off = DetectionEngine(fences: [square("a", lat: 0, lon: 0, size: 0.01)])
        _ = off.process(update(0, 0.005, -0.01))
        #expect(off.process(update(60, 0.005, 0.02)).isEmpty, "crossings are off by default")
    }

    @Test("circles and corridors are crossed too")
    func circleAndCorridor() throws {
        let km = degrees(metres: 1000)
        let circle = Fence(id: "c", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 100)))
        let corridor = Fence(id: "r", region: Region(.corridor(lines: [[Coordinate(latitude: -1, longitude: 0.05),
                                                                         Coordinate(latitude: 1, longitude: 0.05)]], radius: 50)))
        var engine = DetectionEngine(fences: [circle, corridor], configuration: .init(options: .init(crossings: true)))
        _ = engine.process(update(0, 0, -km))
        let events = engine.process(update(100, 0, km))
        #expect(summary(events) == ["cross c @45"])
        let cross = try #require(events.first)
        #expect(abs(cross.time.timeIntervalSince1970 - 45) < 0.05)
        #expect(abs((cross.timeInside ?? 0) - 10) < 0.1)
        _ = engine.process(update(200, 0, 0.04))
        #expect(summary(engine.process(update(210, 0, 0.06))).map { $0.prefix(7) } == ["cross r"])
    }

    @Test("interpolation: entry and exit times estimated on the segment; observedAt keeps the revealing fix")
    func interpolation() throws {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, size: 0.01), .init(interpolate: true))])
        _ = engine.process(update(0, 0.005, -0.01))
        let entry = try #require(engine.process(update(60, 0.005, 0.005)).first)
        #expect(entry.kind == .entry)
        #expect(abs(entry.time.timeIntervalSince1970 - 40) < 1e-6)
        #expect(entry.observedAt == Date(timeIntervalSince1970: 60))
        #expect(abs(entry.coordinate.longitude) < 1e-9)
        let exit = try #require(engine.process(update(120, 0.005, 0.02)).first)
        #expect(exit.kind == .exit)
        #expect(abs(exit.time.timeIntervalSince1970 - 80) < 1e-6)
        #expect(abs((exit.timeInside ?? 0) - 40) < 1e-6)
    }

    @Test("interpolation is not applied beyond the maximum gap or on the first fix")
    func interpolationBounds() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, size: 0.01),
                                                   .init(interpolate: true, maximumGap: 30))])
        #expect(summary(engine.process(update(0, 0.005, 0.005))) == ["entry a @0"])
        _ = engine.process(update(10, 0.005, 0.05))
        _ = engine.process(update(100, 0.005, 0.03))
        #expect(summary(engine.process(update(200, 0.005, 0.005))) == ["entry a @200"])
    }
}

@Suite("Options: initial trigger, dwell, staleness")
struct TriggerAndDwellOptionTests {
    @Test("initial trigger none: the first update only sets presence; later transitions as usual")
    func initialNone() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, dwell: 5), .init(initialTrigger: DetectionOptions.InitialTrigger.none))])
        #expect(engine.process(update(0, 0.5, 0.5)).isEmpty)
        #expect(engine.presence(of: "d").map(\.fence) == ["a"])
        #expect(summary(engine.process(update(10, 5, 5))) == ["dwell a @5", "exit a @10"])
        #expect(summary(engine.process(update(20, 0.5, 0.5))) == ["entry a @20"])
    }

    @Test("initial trigger none also covers a fence added after the device's last update")
    func initialNoneForNewFence() {
        var engine = DetectionEngine(fences: [square("x", lat: 10, lon: 10)])
        _ = engine.process(update(0, 0.5, 0.5))
        engine.upsert(with(square("a", lat: 0, lon: 0), .init(initialTrigger: DetectionOptions.InitialTrigger.none)))
        engine.upsert(square("b", lat: 0, lon: 0))
        #expect(summary(engine.process(update(1, 0.5, 0.5))) == ["entry b @1"])
    }

    @Test("initial trigger inside: level events on every update while inside; edges stay entries and exits")
    func initialInside() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0), .init(initialTrigger: .inside))])
        let first = engine.process(update(0, 0.5, 0.5))
        #expect(summary(first) == ["inside a @0"])
        let second = engine.process(update(1, 0.6, 0.6))
        #expect(summary(second) == ["inside a @1"])
        #expect(first[0].id != second[0].id && first[0].visitID == second[0].visitID)
        #expect(summary(engine.process(update(2, 5, 5))) == ["exit a @2"])
        #expect(summary(engine.process(update(3, 0.5, 0.5))) == ["entry a @3"])
        #expect(summary(engine.process(update(4, 0.5, 0.5))) == ["inside a @4"])
        #expect(engine.statistics.insides == 3)
    }

    @Test("dwell every N: repeated while inside, due ones fire on the next update or on advance, ids distinct")
    func dwellEvery() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, dwell: 10), .init(dwellEvery: 20))])
        _ = engine.process(update(0, 0.5, 0.5))
        let due = engine.process(update(55, 0.5, 0.5))
        #expect(summary(due) == ["dwell a @10", "dwell a @30", "dwell a @50"])
        #expect(Set(due.map(\.id)).count == 3 && Set(due.map(\.visitID)).count == 1)
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 75))) == ["dwell a @70"])
        #expect(summary(engine.process(update(80, 5, 5))) == ["exit a @80"])
        _ = engine.process(update(100, 0.5, 0.5))
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 131))) == ["dwell a @110", "dwell a @130"])
    }

    @Test("staleness: a silent device gets no dwell after the limit; with exitOnStale an exit with reason timeout")
    func staleness() throws {
        var quiet = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, dwell: 100), .init(staleAfter: 60))])
        _ = quiet.process(update(0, 0.5, 0.5))
        #expect(quiet.advance(to: Date(timeIntervalSince1970: 500)).isEmpty)
        #expect(quiet.presence(of: "d").map(\.fence) == ["a"])

        var timing = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, dwell: 100), .init(staleAfter: 60, exitOnStale: true))])
        _ = timing.process(update(0, 0.5, 0.5))
        _ = timing.process(update(50, 0.5, 0.5))
        let exits = timing.advance(to: Date(timeIntervalSince1970: 500))
        #expect(summary(exits) == ["dwell a @100", "exit a @110"])
        let exit = try #require(exits.last)
        #expect(exit.reason == .timeout && exit.timeInside == 110)
        #expect(summary(timing.process(update(600, 0.5, 0.5))) == ["entry a @600"])
    }

    @Test("a dwell due before the staleness limit still fires")
    func dwellBeforeStale() {
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, dwell: 30), .init(staleAfter: 60, exitOnStale: true))])
        _ = engine.process(update(0, 0.5, 0.5))
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 100))) == ["dwell a @30", "exit a @60"])
    }
}

@Suite("Options: reorder window, schedules, duplicates")
struct StreamAndScheduleOptionTests {
    @Test("a reorder window puts late updates in time order; beyond the window they are rejected as before")
    func reorder() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)], configuration: .init(reorderWindow: 30))
        #expect(engine.process(update(0, 5, 5)).isEmpty)
        #expect(engine.process(update(20, 0.5, 0.5)).isEmpty)
        #expect(engine.process(update(10, 0.5, 0.5)).isEmpty, "buffered, not rejected")
        #expect(engine.bufferedUpdateCount == 3)
        #expect(summary(engine.process(update(60, 5, 5))) == ["entry a @10"])
        #expect(summary(engine.advance(to: Date(timeIntervalSince1970: 90))) == ["exit a @60"])
        var events: [GeofenceEvent] = []
        #expect(engine.process(update(5, 0.5, 0.5), into: &events) != nil)
        #expect(engine.statistics.rejectedUpdates == 1)
    }

    @Test("flush processes what is still buffered; replay flushes at the end")
    func flush() {
        var engine = DetectionEngine(fences: [square("a", lat: 0, lon: 0)], configuration: .init(reorderWindow: 600))
        let result = engine.replay([update(20, 0.5, 0.5), update(10, 5, 5)])
        #expect(summary(result.events) == ["entry a @20"])
        #expect(engine.bufferedUpdateCount == 0)
    }

    @Test("a fence with a schedule reports only inside its windows; presence is reset when a window closes")
    func schedule() throws {
        let schedule = try FenceSchedule.parse("Mon 08:00-10:00 UTC").get()
        var engine = DetectionEngine(fences: [with(square("a", lat: 0, lon: 0, dwell: 3 * 3600), .init(schedule: schedule))])
        #expect(engine.process(update(monday(7, 59), 0.5, 0.5)).isEmpty)
        #expect(summary(engine.process(update(monday(8, 1), 0.5, 0.5))) == ["entry a @\(Int(monday(8, 1)))"])
        #expect(engine.advance(to: Date(timeIntervalSince1970: monday(12))).isEmpty, "no dwell, no exit after the window")
        #expect(engine.presence(of: "d").isEmpty)
        #expect(engine.process(update(monday(12, 1), 5, 5)).isEmpty)
        #expect(summary(engine.process(update(monday(8, 0, week: 1), 0.5, 0.5))) == ["entry a @\(Int(monday(8, 0, week: 1)))"])
    }

    @Test("schedules: parsing, offsets, overnight windows, errors that name the part")
    func scheduleParsing() throws {
        let s = try FenceSchedule.parse("Mon-Fri 08:00-18:00, Sat 22:00-02:00 UTC+02:00").get()
        #expect(s.isActive(at: monday(6)))            // 08:00 local
        #expect(!s.isActive(at: monday(5, 59)))
        #expect(s.activeUntil(monday(6)) == monday(16))
        #expect(s.isActive(at: monday(20, week: 0) + 5 * 86_400))  // Saturday 22:00 local
        #expect(s.isActive(at: monday(23, 30) + 5 * 86_400))       // Sunday 01:30 local
        #expect(!s.isActive(at: monday(0, 30) + 6 * 86_400))       // Sunday 02:30 local
        #expect(try FenceSchedule.parse("daily 00:00-24:00 UTC").get().activeUntil(1000) == .infinity)
        for (text, fragment) in [("Mon 08:00-10:00", "UTC offset"), ("Mox 08:00-10:00 UTC", "Mox"),
                                 ("Mon 8-10 UTC", "8-10"), ("Mon 08:00-10:00 UTC+3", "+3"), ("UTC", "no windows")] {
            guard case .failure(let error) = FenceSchedule.parse(text) else {
                Issue.record("\(text) should not parse"); continue
            }
            #expect(error.description.contains(fragment), "\(error)")
        }
    }

    @Test("duplicate suppression: replaying the same updates again yields no new events")
    func duplicates() {
        let fences = [with(square("a", lat: 0, lon: 0, dwell: 5), .init(initialTrigger: .inside))]
        let updates = [update(0, 5, 5), update(10, 0.5, 0.5), update(20, 0.5, 0.5), update(30, 0.6, 0.6)]
        var engine = DetectionEngine(fences: fences, configuration: .init(deduplicate: true))
        #expect(summary(engine.replay(updates).events) == ["entry a @10", "dwell a @15", "inside a @20", "inside a @30"])
        let again = engine.replay(updates)
        #expect(again.events.isEmpty && again.rejections.isEmpty)
        #expect(engine.statistics.duplicateUpdates == 4)
        var naive = DetectionEngine(fences: fences)
        _ = naive.replay(updates)
        #expect(summary(naive.replay(updates).events) == ["inside a @30"], "without it, the last update fires again")
    }
}
