import Foundation
import PerimeterEngine
import PerimeterService
import Synchronization
import Testing

@Suite("Service: process(_:whenStored:) — completions after the shared commit")
struct StoredCompletionTests {
    /// Many chains of calls, each call made from the previous one's completion (as a server does when a
    /// client sends its next update after the answer): every completion comes once, after its events
    /// are in the store, and far fewer commits than calls store them all.
    @Test func completionsComeOnceTheirEventsAreStored() throws {
        let store = SlowCountingStore()
        let service = try Self.service(on: store)
        let commitsBefore = store.commits.withLock { $0 }
        let chains = 8, calls = 10
        let completions = Mutex<[Int: Int]>([:])
        let problems = Self.runChains(service, chains: chains, calls: calls, events: { try store.inner.events(after: $0, limit: 1) }) { chain, _, outcome in
            completions.withLock { $0[chain, default: 0] += 1 }
            if case .success(let result) = outcome, result.events.count != 1 { return "\(result.events.count) events" }
            if case .failure(let error) = outcome { return "\(error)" }
            return nil
        }
        #expect(problems == [])
        #expect(completions.withLock { $0 } == Dictionary(uniqueKeysWithValues: (0..<chains).map { ($0, calls) }))
        let state = try store.load()
        #expect(state.processedUpdates == UInt64(chains * calls))
        #expect(state.lastEventSequence == Int64(chains * calls))
        let commits = store.commits.withLock { $0 } - commitsBefore
        // Each commit takes 2 ms and stores what arrived during the one before: the chains share them.
        #expect(commits >= 1 && commits < chains * calls, "\(commits) commits for \(chains * calls) calls")
    }

    /// Completions while every third commit fails: a success had its events stored, a failure is a
    /// storage failure whose changes the next commit stores. Nothing is lost or stored twice.
    @Test func failedCommitsReportAndKeepTheChanges() throws {
        let store = PeriodicallyFailingStore(period: 3)
        let service = try Self.service(on: store)
        let chains = 6, calls = 15
        let failed = Atomic<Int>(0)
        let problems = Self.runChains(service, chains: chains, calls: calls, events: { try store.inner.events(after: $0, limit: 1) }) { _, _, outcome in
            guard case .failure(let error) = outcome else { return nil }
            guard error.code == .storageFailure else { return "\(error)" }
            failed.add(1, ordering: .relaxed)
            return nil
        }
        #expect(problems == [])
        #expect(failed.load(ordering: .relaxed) > 0, "some commits failed (every third does)")
        if (try? service.flush()) == nil { try service.flush() }
        let total = chains * calls
        let stored = try store.inner.events(after: 0, limit: total + 10)
        #expect(stored.map(\.sequence) == Array(1...Int64(total)), "each event once, in order")
        let state = try store.load()
        #expect(state.processedUpdates == UInt64(total))
        #expect(state.devices.count == chains)
        for device in state.devices {
            #expect(device.memberships.map(\.fence) == ["z"], "\(device.device)")
        }
    }

    /// Errors before processing and calls with nothing to wait for complete on the calling thread,
    /// before `process` returns; observers hear of the events before the completion runs.
    @Test func immediateCompletions() throws {
        let service = GeofencingService()
        let unconfigured = Mutex<GeofencingError.Code?>(nil)
        service.process([LocationUpdate(device: "a", time: date(0), latitude: 0, longitude: 0)]) { outcome in
            if case .failure(let error) = outcome { unconfigured.withLock { $0 = error.code } }
        }
        #expect(unconfigured.withLock { $0 } == .notConfigured)

        try service.configure(GeofencingOptions(durability: .everyUpdates(1_000)))
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 1_000))
        let observer = RecordingObserver()
        service.addObserver(observer)
        let seen = Mutex<(events: Int, observed: Int)?>(nil)
        service.process([LocationUpdate(device: "a", time: date(0), latitude: 0, longitude: 0)]) { outcome in
            let events = (try? outcome.get())?.events.count ?? -1
            seen.withLock { $0 = (events, observer.events.count) }
        }
        // `.everyUpdates` commits later: nothing to wait for, so the completion already ran.
        #expect(seen.withLock { $0?.events } == 1)
        #expect(seen.withLock { $0?.observed } == 1)

        try service.setUserConsent(false)
        let consent = Mutex<GeofencingError.Code?>(nil)
        service.process([LocationUpdate(device: "a", time: date(1), latitude: 0, longitude: 0)]) { outcome in
            if case .failure(let error) = outcome { consent.withLock { $0 = error.code } }
        }
        #expect(consent.withLock { $0 } == .consentMissing)
    }

    /// A configured service on `store` watching one circle around (0, 0).
    static func service(on store: any GeofencingStore) throws -> GeofencingService {
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())  // durability: .everyCall
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 1_000))
        return service
    }

    /// Runs `chains` chains of `calls` single updates, each made from the previous one's completion;
    /// device `d<chain>` alternates inside and outside the circle, so every call causes one event.
    /// Checks that each successful call's events are in the store (`events(after:)`) when it completes,
    /// and hands every outcome to `check`, which returns a problem or `nil`.
    /// - Returns: the problems, each prefixed with its chain and call.
    static func runChains(_ service: GeofencingService, chains: Int, calls: Int,
                          events: @escaping @Sendable (Int64) throws -> [GeofencingEvent],
                          check: @escaping @Sendable (Int, Int, Result<BatchResult, GeofencingError>) -> String?) -> [String] {
        let problems = Mutex<[String]>([])
        let done = DispatchGroup()
        @Sendable func call(_ chain: Int, _ k: Int) {
            guard k < calls else {
                done.leave()
                return
            }
            let update = LocationUpdate(device: DeviceID("d\(chain)"), time: date(Double(k)),
                                        latitude: k % 2 == 0 ? 0 : 1, longitude: 0)
            service.process([update]) { outcome in
                var found = check(chain, k, outcome).map { [$0] } ?? []
                if case .success(let result) = outcome {
                    for event in result.events where (try? events(event.sequence - 1))?.first?.event.id != event.event.id {
                        found.append("event \(event.sequence) not stored")
                    }
                }
                if !found.isEmpty { problems.withLock { $0 += found.map { "chain \(chain) call \(k): \($0)" } } }
                call(chain, k + 1)
            }
        }
        for chain in 0..<chains {
            done.enter()
            call(chain, 0)
        }
        if done.wait(timeout: .now() + 60) == .timedOut { problems.withLock { $0.append("chains did not finish in 60 s") } }
        return problems.withLock { $0 }
    }
}
