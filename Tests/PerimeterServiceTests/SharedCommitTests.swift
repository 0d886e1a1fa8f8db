import Foundation
import PerimeterEngine
import PerimeterService
import Synchronization
import Testing

/// A store whose commits take a while and are counted, forwarding to an in-memory store.
final class SlowCountingStore: GeofencingStore {
    let inner = InMemoryGeofencingStore()
    let commits = Mutex(0)

    func load() throws -> StoredState { try inner.load() }

    func commit(_ changes: StoreChanges) throws {
        usleep(2_000)
        try inner.commit(changes)
        commits.withLock { $0 += 1 }
    }

    func events(after sequence: Int64, limit: Int) throws -> [LoggedEvent] {
        try inner.events(after: sequence, limit: limit)
    }
}

@Suite("Service: every-call durability under concurrent callers")
struct SharedCommitTests {
    /// Threads (not tasks: they block on the store) process at once; every call must return only once
    /// its own events are in the store, whichever thread's commit stored them.
    @Test func everyCallReturnsOnlyOnceItsEventsAreStored() throws {
        let store = SlowCountingStore()
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())  // durability: .everyCall
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 1_000))
        let commitsBefore = store.commits.withLock { $0 }
        let threads = 6, calls = 12
        let failures = Mutex<[String]>([])
        let done = DispatchGroup()
        for t in 0..<threads {
            done.enter()
            Thread {
                defer { done.leave() }
                for k in 0..<calls {
                    // Alternate inside and far away: every call causes an entry or an exit.
                    let inside = k % 2 == 0
                    let update = LocationUpdate(device: DeviceID("d\(t)"), time: date(Double(k)),
                                                latitude: inside ? 0 : 1, longitude: 0)
                    do {
                        let events = try service.process(update)
                        guard let last = events.last else {
                            failures.withLock { $0.append("thread \(t) call \(k): no event") }
                            continue
                        }
                        let stored = try store.inner.events(after: last.sequence - 1, limit: 1)
                        if stored.first?.event.id != last.event.id {
                            failures.withLock { $0.append("thread \(t) call \(k): event \(last.sequence) not stored on return") }
                        }
                    } catch {
                        failures.withLock { $0.append("thread \(t) call \(k): \(error)") }
                    }
                }
            }.start()
        }
        done.wait()
        #expect(failures.withLock { $0 } == [])
        let state = try store.load()
        #expect(state.processedUpdates == UInt64(threads * calls))
        #expect(state.lastEventSequence == Int64(threads * calls))
        let commits = store.commits.withLock { $0 } - commitsBefore
        #expect(commits >= 1 && commits <= threads * calls)
    }
}
