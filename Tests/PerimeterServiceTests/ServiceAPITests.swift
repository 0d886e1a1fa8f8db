import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import Testing

@Suite("GeofencingService API")
struct ServiceAPITests {
    func configured(_ options: GeofencingOptions = GeofencingOptions()) throws -> GeofencingService {
        let service = GeofencingService()
        try service.configure(options)
        return service
    }

    @Test("every call before configure fails with notConfigured")
    func notConfigured() {
        let service = GeofencingService()
        let update = LocationUpdate(device: "d", time: date(0), latitude: 0, longitude: 0)
        #expect(throws: GeofencingError.self) { try service.process(update) }
        do {
            try service.addFeature(circle("a", latitude: 0, longitude: 0, radius: 10))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .notConfigured)
            #expect(error.message.contains("configure"))
        }
    }

    @Test("bad options are refused with the option named")
    func badOptions() {
        let service = GeofencingService()
        do {
            try service.configure(GeofencingOptions(maximumMonitoredFeatures: -1))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("maximumMonitoredFeatures"))
        }
        #expect(service.options == nil)
    }

    @Test("the feature limit is enforced atomically and named")
    func limit() throws {
        let service = try configured(GeofencingOptions(maximumMonitoredFeatures: 3))
        try service.addFeatures((0..<2).map { circle("f\($0)", latitude: 0, longitude: 0, radius: 10) })
        do {
            try service.addFeatures((2..<4).map { circle("f\($0)", latitude: 0, longitude: 0, radius: 10) })
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .limitExceeded)
            #expect(error.message.contains("maximumMonitoredFeatures (3)"))
        }
        #expect(try service.features().count == 2, "nothing of a refused batch is added")
        try service.addFeature(circle("f0", latitude: 1, longitude: 1, radius: 10))  // replacing is not adding
        try service.addFeature(circle("f2", latitude: 1, longitude: 1, radius: 10))
        #expect(try service.features().count == 3)
        #expect(GeofencingOptions().maximumMonitoredFeatures == 100_000)
    }

    @Test("invalid features are refused with the problems attached, and nothing of the batch is added")
    func invalidFeature() throws {
        let service = GeofencingService()
        try service.configure(GeofencingOptions(defaultRadius: nil))
        let noID = GeoJSON.Feature(geometry: .point(GeoJSON.Point(GeoJSON.Position(longitude: 0, latitude: 0))),
                                   properties: ["perimeter:radius": 5])
        let noRadius = GeoJSON.Feature(id: .string("p"), geometry: .point(GeoJSON.Point(GeoJSON.Position(longitude: 0, latitude: 0))))
        for bad in [noID, noRadius] {
            do {
                try service.addFeatures([circle("ok", latitude: 0, longitude: 0, radius: 10), bad])
                Issue.record("expected an error")
            } catch {
                #expect(error.code == .invalidFeature)
                #expect(error.message.contains("feature 1"))
            }
        }
        #expect(try service.features().isEmpty)
        do {
            try service.addFeature(noRadius)
        } catch {
            #expect(error.featureID == "p")
            #expect(error.problems.contains { $0.message.contains("radius") })
        }
        // A default radius makes the same feature valid.
        try service.configure(GeofencingOptions(defaultRadius: 50))
        try service.addFeature(noRadius)
        #expect(try service.fence(id: "p") != nil)
    }

    @Test("features: get, list by group in insertion order, remove, remove group, clear")
    func featureManagement() throws {
        let service = try configured()
        let features = (0..<6).map { circle("f\($0)", latitude: 0, longitude: 0, radius: 10, group: $0 % 2 == 0 ? "even" : "odd") }
        try service.addFeatures(features)
        #expect(try service.feature(id: "f3") == features[3])
        #expect(try service.features(group: "even") == [features[0], features[2], features[4]])
        #expect(try service.features() == features)
        try service.removeFeature(id: "f0")
        do {
            try service.removeFeature(id: "f0")
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .featureNotFound)
            #expect(error.message.contains("f0"))
        }
        #expect(throws: GeofencingError.self) { try service.feature(id: "nope") }
        #expect(try service.removeFeatures(group: "odd") == 3)
        #expect(try service.features().map(\.id) == [.string("f2"), .string("f4")])
        try service.clearFeatures()
        #expect(try service.features().isEmpty)
    }

    @Test("observers and the async stream hear entry, dwell and exit in log order")
    func observersAndStream() async throws {
        let service = try configured()
        let observer = RecordingObserver()
        service.addObserver(observer)
        service.addObserver(observer)  // once only
        let stream = service.events()
        try service.addFeature(circle("zone", latitude: 10, longitude: 10, radius: 200, dwell: 30))
        let updates = [
            LocationUpdate(device: "a", time: date(0), latitude: 10, longitude: 10),
            LocationUpdate(device: "a", time: date(40), latitude: 10, longitude: 10),
            LocationUpdate(device: "a", time: date(50), latitude: 11, longitude: 10),
        ]
        let result = try service.process(updates)
        #expect(result.events.map(\.event.kind) == [.entry, .dwell, .exit])
        #expect(observer.events == result.events)
        var received: [GeofencingEvent] = []
        for await logged in stream {
            received.append(logged)
            if received.count == 3 { break }
        }
        #expect(received == result.events)
        service.removeObserver(observer)
        try service.process(LocationUpdate(device: "a", time: date(60), latitude: 10, longitude: 10))
        #expect(observer.events.count == 3)
    }

    @Test("rejections: out of order, invalid, inaccurate; they change nothing and are reported")
    func rejections() throws {
        let service = try configured(GeofencingOptions(maximumHorizontalAccuracy: 50))
        let observer = RecordingObserver()
        service.addObserver(observer)
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 100))
        try service.process(LocationUpdate(device: "d", time: date(10), latitude: 5, longitude: 5))
        let batch = [
            LocationUpdate(device: "d", time: date(5), latitude: 0, longitude: 0),
            LocationUpdate(device: "d", time: date(11), latitude: 91, longitude: 0),
            LocationUpdate(device: "d", time: date(12), latitude: 0, longitude: 0, horizontalAccuracy: 80),
            LocationUpdate(device: "d", time: date(13), latitude: 0, longitude: 0, horizontalAccuracy: 20),
        ]
        let result = try service.process(batch)
        #expect(result.rejections.map(\.index) == [0, 1, 2])
        #expect(result.rejections.map(\.error.code) == [.outOfOrderUpdate, .invalidLocation, .inaccurateLocation])
        #expect(result.events.map(\.event.kind) == [.entry])
        #expect(result.events.first?.event.time == date(13))
        #expect(observer.errors.map(\.code) == [.outOfOrderUpdate, .invalidLocation, .inaccurateLocation])
        #expect(service.processedUpdateCount == 5)
        do {
            try service.process(LocationUpdate(device: "d", time: date(1), latitude: 0, longitude: 0))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .outOfOrderUpdate)
            #expect(error.device == "d")
        }
    }

    @Test("without consent nothing is processed or stored; observers hear consent changes")
    func consent() throws {
        let store = InMemoryGeofencingStore()
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())
        let observer = RecordingObserver()
        service.addObserver(observer)
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 100))
        let inside = LocationUpdate(device: "d", time: date(0), latitude: 0, longitude: 0)

        try service.setUserConsent(false)
        do {
            try service.process([inside])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .consentMissing)
        }
        #expect(service.processedUpdateCount == 0)
        #expect(try service.deviceStatus(of: "d").lastUpdateTime == nil)
        #expect(try store.load().devices.isEmpty)
        try service.setUserConsent(false)  // unchanged: no notification
        try service.setUserConsent(true)

        try service.setUserConsent(false, for: "d")
        let other = LocationUpdate(device: "e", time: date(0), latitude: 0, longitude: 0)
        do {
            try service.process([other, inside])
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .consentMissing)
            #expect(error.device == "d")
            #expect(error.message.contains("update 1"))
        }
        #expect(try service.deviceStatus(of: "e").lastUpdateTime == nil, "a refused batch processes none of its updates")
        #expect(try service.userConsent(for: "d") == false)
        #expect(try service.userConsent(for: "e") == true)
        #expect(observer.consent.map { "\($0.0?.rawValue ?? "*")=\($0.1)" } == ["*=false", "*=true", "d=false"])
        #expect(try service.process([other]).events.count == 1)

        let strict = try configured(GeofencingOptions(consentByDefault: false))
        #expect(throws: GeofencingError.self) { try strict.process(other) }
        try strict.setUserConsent(true, for: "e")
        try strict.process(other)
    }

    @Test("process(batch) equals the bare engine with the clock advanced before each update", arguments: [5 as UInt64, 6])
    func matchesEngine(seed: UInt64) throws {
        let scenario = Scenario(seed: seed, fences: 20, devices: 10, updates: 1500)
        let service = try configured(GeofencingOptions(defaultDwellTime: 30, timeModel: .data))
        try service.addFeatures(scenario.features)
        let result = try service.process(scenario.updates)
        #expect(result.events.map(\.event) == scenario.engineEvents(defaultDwellTime: 30))
        #expect(result.rejections.count == service.statistics.rejectedUpdates)
        #expect(result.rejections.count > 0)
    }

    @Test("many tasks at once: every update is processed exactly once")
    func concurrency() async throws {
        let service = try configured()
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 1000))
        await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for i in 0..<100 {
                        let inside = i % 2 == 0
                        try service.process(LocationUpdate(device: DeviceID("d\(task)"), time: date(Double(i)),
                                                           latitude: inside ? 0 : 1, longitude: 0))
                    }
                }
            }
        }
        #expect(service.processedUpdateCount == 800)
        let log = try service.loggedEvents(after: 0, limit: 10_000)
        #expect(log.count == 800)  // 50 entries + 50 exits per device
        #expect(log.map(\.sequence) == Array(1...800))
        #expect(Set(log.map(\.event.id)).count == 800)
    }
}
