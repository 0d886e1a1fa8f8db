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

    func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent] {
        try inner.events(after: sequence, limit: limit)
    }
}

/// A store whose every `period`-th commit fails (slowly), and every commit while `failing` is set,
/// forwarding the others to an in-memory store.
final class PeriodicallyFailingStore: GeofencingStore {
    let inner = InMemoryGeofencingStore()
    let period: Int
    let attempts = Mutex(0)
    let failing = Atomic<Bool>(false)

    init(period: Int) { self.period = period }

    func load() throws -> StoredState { try inner.load() }

    func commit(_ changes: StoreChanges) throws {
        usleep(500)
        let attempt = attempts.withLock { $0 += 1; return $0 }
        if attempt % period == 0 || failing.load(ordering: .relaxed) { throw CocoaError(.fileWriteOutOfSpace) }
        try inner.commit(changes)
    }

    func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent] {
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
        onThreads(threads) { t in
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
        }
        #expect(failures.withLock { $0 } == [])
        let state = try store.load()
        #expect(state.processedUpdates == UInt64(threads * calls))
        #expect(state.lastEventSequence == Int64(threads * calls))
        let commits = store.commits.withLock { $0 } - commitsBefore
        #expect(commits >= 1 && commits <= threads * calls)
    }

    /// Concurrent callers while every third commit fails: a call that returns had its events stored;
    /// one that failed had them kept for a later commit. In the end every event is stored exactly
    /// once, in sequence order, with every device's last state.
    @Test func failedSharedCommitsLoseAndRepeatNothing() throws {
        let store = PeriodicallyFailingStore(period: 3)
        let service = GeofencingService(store: store)
        try service.configure(GeofencingOptions())
        try service.addFeature(circle("z", latitude: 0, longitude: 0, radius: 1_000))
        let threads = 6, calls = 15
        let problems = Mutex<[String]>([])
        let failed = Atomic<Int>(0)
        onThreads(threads) { t in
            for k in 0..<calls {
                let update = LocationUpdate(device: DeviceID("d\(t)"), time: date(Double(k)),
                                            latitude: k % 2 == 0 ? 0 : 1, longitude: 0)
                do {
                    let events = try service.process(update)
                    for event in events where try store.inner.events(after: event.sequence - 1, limit: 1).first?.event.id != event.event.id {
                        problems.withLock { $0.append("thread \(t) call \(k): event \(event.sequence) not stored on return") }
                    }
                } catch let error as GeofencingError where error.code == .storageFailure {
                    failed.add(1, ordering: .relaxed)
                } catch {
                    problems.withLock { $0.append("thread \(t) call \(k): \(error)") }
                }
            }
        }
        #expect(problems.withLock { $0 } == [])
        #expect(failed.load(ordering: .relaxed) > 0, "some commits failed (every third does)")
        // Whatever is still pending is written by the next commit that succeeds.
        if (try? service.flush()) == nil { try service.flush() }
        let total = threads * calls
        let stored = try store.inner.events(after: 0, limit: total + 10)
        #expect(stored.map(\.sequence) == Array(1...Int64(total)), "each event once, in order")
        let state = try store.load()
        #expect(state.processedUpdates == UInt64(total))
        for device in state.devices {
            // Each device's last update (k = calls - 1, even) is inside.
            #expect(device.memberships.map(\.fence) == ["z"], "\(device.device)")
        }
        #expect(state.devices.count == threads)
    }

    /// Runs `body(t)` on `count` threads (not tasks: they block on the store) and waits for all.
    func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let done = DispatchGroup()
        for t in 0..<count {
            done.enter()
            Thread {
                defer { done.leave() }
                body(t)
            }.start()
        }
        done.wait()
    }
}
