import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import Synchronization
import Testing

/// A store that fails its commits while `failing` is set, and otherwise forwards to an in-memory store.
final class FlakyStore: GeofencingStore {
    let inner = InMemoryGeofencingStore()
    let failing = Mutex(false)

    func load() throws -> StoredState { try inner.load() }

    func commit(_ changes: StoreChanges) throws {
        if failing.withLock({ $0 }) { throw CocoaError(.fileWriteOutOfSpace) }
        try inner.commit(changes)
    }

    func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent] {
        try inner.events(after: sequence, limit: limit)
    }
}

@Suite("Service failure handling")
struct ServiceFailureTests {
    @Test("a failed commit is reported, keeps the changes pending, and flush() writes them later")
    func failedCommitIsRetried() throws {
        let store = FlakyStore()
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())
        let observer = RecordingObserver()
        service.addObserver(observer)
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 100))
        store.failing.withLock { $0 = true }
        do {
            try service.process(LocationUpdate(device: "d", time: date(0), latitude: 0, longitude: 0))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .storageFailure)
            #expect(error.message.contains("flush()"))
        }
        #expect(observer.events.map(\.event.kind) == [.entry], "the event happened in memory")
        #expect(observer.errors.map(\.code) == [.storageFailure])
        #expect(try store.load().processedUpdates == 0)
        #expect(throws: GeofencingError.self) { try service.flush() }
        store.failing.withLock { $0 = false }
        try service.flush()
        let state = try store.load()
        #expect(state.processedUpdates == 1)
        #expect(state.lastEventSequence == 1)
        #expect(state.devices.first?.memberships.map(\.fence) == ["z"])
    }

    @Test("features with detection options are monitored; bad option properties are refused with the key named")
    func detectionOptions() throws {
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 100, extra: ["perimeter:entry-delay": 30]))
        #expect(try service.fence(id: "z")?.options.entryDelay == 30)
        do {
            try service.addFeature(circle("y", latitude: 0, longitude: 0, radius: 100, extra: ["perimeter:entry-delay": "soon"]))
            Issue.record("expected an error")
        } catch {
            #expect(error.code == .invalidFeature)
            #expect(error.message.contains("perimeter:entry-delay"))
        }
        #expect(try service.features().count == 1)
    }

    @Test("every error code's message is non-empty and says what to do")
    func messages() throws {
        let service = GeofencingService()
        var seen: [GeofencingError] = []
        do { try service.flush() } catch { seen.append(error) }  // flush before configure is harmless
        do { _ = try service.features() } catch { seen.append(error) }
        try service.configure(GeofencingOptions(maximumMonitoredFeatures: 0))
        do { try service.addFeature(circle("a", latitude: 0, longitude: 0, radius: 1)) } catch { seen.append(error) }
        do { try service.removeFeature(id: "a") } catch { seen.append(error) }
        #expect(seen.map(\.code) == [.notConfigured, .limitExceeded, .featureNotFound])
        #expect(seen.allSatisfy { $0.message.count > 30 && $0.description.hasPrefix($0.code.rawValue) })
    }
}
