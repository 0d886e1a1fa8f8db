import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import Synchronization
import Testing

/// An observer written exactly as for Mapbox's SDK: only its five methods.
private final class MapboxObserver: GeofencingObserver {
    let heard = Mutex<[String]>([])
    func onEntry(event: GeofencingEvent) { heard.withLock { $0.append("entry \(event.feature.id?.description ?? "")") } }
    func onDwell(event: GeofencingEvent) { heard.withLock { $0.append("dwell \(event.feature.id?.description ?? "")") } }
    func onExit(event: GeofencingEvent) { heard.withLock { $0.append("exit \(event.feature.id?.description ?? "")") } }
    func onError(error: GeofencingError) { heard.withLock { $0.append("error \(error.code)") } }
    func onUserConsentChanged(isConsentGiven: Bool) { heard.withLock { $0.append("consent \(isConsentGiven)") } }
}

@Suite("Mapbox's shape of the service")
struct MapboxShapeTests {
    @Test("async methods: configure, getOptions, addFeature, getFeature (with the entry time), removeFeature, clearFeatures")
    func asyncMethods() async throws {
        let service = GeofencingService()
        do {
            _ = try await service.getOptions()
            Issue.record("expected notConfigured")
        } catch {
            #expect(error.code == .notConfigured)
        }
        try await service.configure(options: GeofencingOptions(defaultDwellTime: 60))
        #expect(try await service.getOptions().defaultDwellTime == 60)
        #expect(try await service.addFeature(feature: circle("zone", latitude: 10, longitude: 10, radius: 200)) == "zone")
        #expect(try await service.addFeature(feature: square("sq", latitude: 20, longitude: 20, half: 0.01)) == "sq")

        var state = try await service.getFeature(identifier: "zone")
        #expect(state.feature == circle("zone", latitude: 10, longitude: 10, radius: 200))
        #expect(state.timestamp == nil, "nobody is inside")
        try service.process([LocationUpdate(device: "late", time: date(50), latitude: 10, longitude: 10),
                             LocationUpdate(device: "early", time: date(20), latitude: 10, longitude: 10)])
        state = try await service.getFeature(identifier: "zone")
        #expect(state.timestamp == date(20), "the earliest entry of the devices inside")
        #expect(try await service.getFeature(identifier: "zone", device: "late").timestamp == date(50))
        #expect(try await service.getFeature(identifier: "sq", device: "late").timestamp == nil)

        #expect(try await service.removeFeature(identifier: "zone") == "zone")
        do {
            _ = try await service.getFeature(identifier: "zone")
            Issue.record("expected featureNotFound")
        } catch {
            #expect(error.code == .featureNotFound)
        }
        do {
            _ = try await service.removeFeature(identifier: "zone")
            Issue.record("expected featureNotFound")
        } catch {
            #expect(error.code == .featureNotFound)
        }
        do {
            _ = try await service.addFeature(feature: GeoJSON.Feature(geometry: nil))
            Issue.record("expected invalidFeature")
        } catch {
            #expect(error.code == .invalidFeature)
        }
        try await service.clearFeatures()
        #expect(try service.features().isEmpty)
    }

    @Test("callbacks get a Result each, once, in the order the calls were made")
    func callbacks() async throws {
        let service = GeofencingService()
        let log = Mutex<[String]>([])
        @Sendable func note(_ line: String) { log.withLock { $0.append(line) } }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            service.getOptions { note("getOptions \((try? $0.get()) == nil ? "failed" : "ok")") }
            service.configure(options: GeofencingOptions()) { note("configure \((try? $0.get()) != nil)") }
            service.addFeature(feature: circle("a", latitude: 1, longitude: 1, radius: 50)) { note("add \((try? $0.get()) ?? "failed")") }
            service.addFeature(feature: GeoJSON.Feature(geometry: nil)) { result in
                if case .failure(let error) = result { note("add \(error.code)") }
            }
            service.getFeature(identifier: "a") { note("get \((try? $0.get())?.feature.id?.description ?? "failed")") }
            service.removeFeature(identifier: "a") { note("remove \((try? $0.get()) ?? "failed")") }
            service.getFeature(identifier: "a") { result in
                if case .failure(let error) = result { note("get \(error.code)") }
            }
            service.clearFeatures { note("clear \((try? $0.get()) != nil)") }
            service.getOptions { result in
                note("getOptions \((try? result.get())?.defaultRadius ?? 0)")
                done.resume()
            }
        }
        #expect(log.withLock { $0 } == [
            "getOptions failed", "configure true", "add a", "add invalidFeature", "get a", "remove a",
            "get featureNotFound", "clear true", "getOptions 300.0",
        ])
    }

    @Test("a Mapbox-shaped observer hears entry, dwell, exit and service-wide consent; an extended one hears the rest too")
    func observers() async throws {
        let service = GeofencingService()
        try await service.configure(options: GeofencingOptions())
        let plain = MapboxObserver()
        let extended = RecordingObserver()
        await service.addObserver(observer: plain)
        service.addObserver(extended)
        _ = try await service.addFeature(feature: circle("stay", latitude: 0, longitude: 0, radius: 300, dwell: 30))
        _ = try await service.addFeature(feature: circle("pass", latitude: 0, longitude: 0.01, radius: 100,
                                                         extra: ["perimeter:crossings": true]))
        try service.process([LocationUpdate(device: "a", time: date(0), latitude: 0, longitude: 0),
                             LocationUpdate(device: "a", time: date(40), latitude: 0, longitude: 0),
                             LocationUpdate(device: "a", time: date(50), latitude: 0, longitude: 0.02),
                             LocationUpdate(device: "a", time: date(5), latitude: 0, longitude: 0)])
        try service.setUserConsent(false, for: "a")
        try service.setUserConsent(false)
        #expect(throws: GeofencingError.self) { try service.process(LocationUpdate(device: "b", time: date(60), latitude: 0, longitude: 0)) }
        #expect(plain.heard.withLock { $0 } == ["entry stay", "dwell stay", "exit stay", "error outOfOrderUpdate", "consent false"])
        #expect(extended.events.map { "\($0.event.kind) \($0.event.fence)" } == ["entry stay", "dwell stay", "exit stay", "cross pass"])
        #expect(extended.consent.map { "\($0.0?.rawValue ?? "*")=\($0.1)" } == ["a=false", "*=false"])

        await service.removeObserver(observer: plain)
        try service.setUserConsent(true)
        #expect(plain.heard.withLock { $0 }.count == 5)
    }

    @Test("GeofencingFactory gives one shared service")
    func factory() {
        #expect(GeofencingFactory.getOrCreate() === GeofencingFactory.getOrCreate())
    }
}
