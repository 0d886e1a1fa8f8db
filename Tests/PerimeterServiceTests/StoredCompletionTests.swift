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
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 1_000))
        let commitsBefore = store.commits.withLock { $0 }
        let chains = 8, calls = 10
        let problems = Mutex<[String]>([])
        let completions = Mutex<[Int: Int]>([:])
        let done = DispatchGroup()

        @Sendable func call(_ chain: Int, _ k: Int) {
            guard k < calls else {
                done.leave()
                return
            }
            let update = LocationUpdate(device: DeviceID("d\(chain)"), time: date(Double(k)),
                                        latitude: k % 2 == 0 ? 0 : 1, longitude: 0)
            service.process([update]) { outcome in
                completions.withLock { $0[chain, default: 0] += 1 }
                switch outcome {
                case .success(let result):
                    if result.events.count != 1 {
                        problems.withLock { $0.append("chain \(chain) call \(k): \(result.events.count) events") }
                    }
                    for event in result.events {
                        let stored = try? store.inner.events(after: event.sequence - 1, limit: 1)
                        if stored?.first?.event.id != event.event.id {
                            problems.withLock { $0.append("chain \(chain) call \(k): event \(event.sequence) not stored") }
                        }
                    }
                case .failure(let error):
                    problems.withLock { $0.append("chain \(chain) call \(k): \(error)") }
                }
                call(chain, k + 1)
            }
        }
        for chain in 0..<chains {
            done.enter()
            call(chain, 0)
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(problems.withLock { $0 } == [])
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
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 1_000))
        let chains = 6, calls = 15
        let problems = Mutex<[String]>([])
        let failed = Atomic<Int>(0)
        let done = DispatchGroup()

        @Sendable func call(_ chain: Int, _ k: Int) {
            guard k < calls else {
                done.leave()
                return
            }
            let update = LocationUpdate(device: DeviceID("d\(chain)"), time: date(Double(k)),
                                        latitude: k % 2 == 0 ? 0 : 1, longitude: 0)
            service.process([update]) { outcome in
                switch outcome {
                case .success(let result):
                    for event in result.events
                    where (try? store.inner.events(after: event.sequence - 1, limit: 1))?.first?.event.id != event.event.id {
                        problems.withLock { $0.append("chain \(chain) call \(k): event \(event.sequence) not stored") }
                    }
                case .failure(let error) where error.code == .storageFailure:
                    failed.add(1, ordering: .relaxed)
                case .failure(let error):
                    problems.withLock { $0.append("chain \(chain) call \(k): \(error)") }
                }
                call(chain, k + 1)
            }
        }
        for chain in 0..<chains {
            done.enter()
            call(chain, 0)
        }
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(problems.withLock { $0 } == [])
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
}
