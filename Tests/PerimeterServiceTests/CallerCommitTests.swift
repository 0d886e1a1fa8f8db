import Foundation
import PerimeterEngine
import PerimeterService
import Synchronization
import Testing

@Suite("Service: completions committed by the caller (commitWaiting)")
struct CallerCommitTests {
    /// With `.caller`, completions wait for `commitWaiting()`: nothing is stored or completed before
    /// it; one call stores everything that waits in one commit and runs each completion once, on the
    /// calling thread, in call order.
    @Test func oneCallCommitsEverythingThatWaits() throws {
        let store = SlowCountingStore()
        let service = try StoredCompletionTests.service(on: store)
        let commitsBefore = store.commits.withLock { $0 }
        let caller = ObjectIdentifier(Thread.current)
        let completed = Mutex<[Int]>([])
        let problems = Mutex<[String]>([])
        for k in 0..<5 {
            let update = LocationUpdate(device: DeviceID("d\(k)"), time: date(Double(k)), latitude: 0, longitude: 0)
            service.process([update], committer: .caller) { outcome in
                if ObjectIdentifier(Thread.current) != caller { problems.withLock { $0.append("completion \(k) on another thread") } }
                if case .failure(let error) = outcome { problems.withLock { $0.append("completion \(k): \(error)") } }
                completed.withLock { $0.append(k) }
            }
        }
        // No committer thread: nothing happens until the caller commits.
        usleep(50_000)
        #expect(completed.withLock { $0 }.isEmpty)
        #expect(store.commits.withLock { $0 } == commitsBefore)
        #expect(service.commitWaiting() == 5)
        #expect(completed.withLock { $0 } == [0, 1, 2, 3, 4])
        #expect(problems.withLock { $0 } == [])
        #expect(store.commits.withLock { $0 } - commitsBefore == 1, "one commit for the five calls")
        #expect(try store.inner.events(after: 0, limit: 10).count == 5)
        #expect(service.commitWaiting() == 0, "nothing waits any more")
    }

    /// A failing commit completes the calls it covered with a storage failure; their changes stay
    /// pending, and the next commit stores them (nothing lost, nothing twice).
    @Test func aFailedCommitFailsTheCallsItCovered() throws {
        let store = PeriodicallyFailingStore(period: .max)
        let service = try StoredCompletionTests.service(on: store)
        store.failing.store(true, ordering: .relaxed)
        let outcomes = Mutex<[GeofencingError.Code?]>([])
        for k in 0..<3 {
            let update = LocationUpdate(device: DeviceID("d\(k)"), time: date(Double(k)), latitude: 0, longitude: 0)
            service.process([update], committer: .caller) { outcome in
                outcomes.withLock { list in
                    if case .failure(let error) = outcome { list.append(error.code) } else { list.append(nil) }
                }
            }
        }
        #expect(service.commitWaiting() == 3)
        #expect(outcomes.withLock { $0 } == [.storageFailure, .storageFailure, .storageFailure])
        #expect(try store.inner.events(after: 0, limit: 10).isEmpty)
        store.failing.store(false, ordering: .relaxed)
        try service.flush()
        #expect(try store.inner.events(after: 0, limit: 10).map(\.sequence) == [1, 2, 3])
    }
}

@Suite("Service: the event sink")
struct EventSinkTests {
    /// Calls from several threads: the sink receives every logged event once, in sequence order, and
    /// keeps receiving after `configure` is called again; `nil` removes it.
    @Test func theSinkSeesTheLogInOrder() throws {
        let service = try StoredCompletionTests.service(on: InMemoryGeofencingStore())
        let seen = Mutex<[Int64]>([])
        service.setEventSink { events in seen.withLock { $0 += events.map(\.sequence) } }
        let threads = 4, calls = 25
        let done = DispatchGroup()
        for t in 0..<threads {
            done.enter()
            Thread {
                for k in 0..<calls {
                    // Alternately inside and outside the circle: one event per call.
                    let update = LocationUpdate(device: DeviceID("t\(t)"), time: date(Double(k)), latitude: k % 2 == 0 ? 0 : 1, longitude: 0)
                    _ = try? service.process([update])
                }
                done.leave()
            }.start()
        }
        done.wait()
        #expect(seen.withLock { $0 } == Array(1...Int64(threads * calls)))
        try service.configure(GeofencingOptions())
        _ = try service.process([LocationUpdate(device: "t0", time: date(100), latitude: 1, longitude: 0)])
        #expect(seen.withLock { $0.last } == Int64(threads * calls + 1), "still set after configure")
        service.setEventSink(nil)
        _ = try service.process([LocationUpdate(device: "t0", time: date(101), latitude: 0, longitude: 0)])
        #expect(seen.withLock { $0.count } == threads * calls + 1, "removed")
    }
}
