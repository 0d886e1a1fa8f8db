import Foundation
@testable import PerimeterService
import PerimeterTestSupport
import Synchronization
import Testing

@Suite("GroupCommit's committer thread")
struct GroupCommitTests {
    /// The committer thread, idle while another thread's long commit runs, sleeps and ends after its
    /// linger time instead of spinning on the lock (which once starved that commit's end for minutes);
    /// the other commit finishes normally.
    @Test func idleCommitterSleepsWhileAnotherCommitRuns() throws {
        let group = GroupCommit(committerLinger: 0.05)
        let completed = Atomic<Int>(0)
        group.whenStored(0, commit: { .init(durableBelow: 1) }) { error in
            if error == nil { completed.add(1, ordering: .relaxed) }
        }
        #expect(waitUntil { completed.load(ordering: .relaxed) == 1 })
        let roundsBefore = group.committerState.rounds
        // A caller's own commit that takes 6 × the linger time.
        let error = group.commit(through: 1) {
            usleep(300_000)
            return .init(durableBelow: 2)
        }
        #expect(error == nil)
        #expect(waitUntil { !group.committerState.isRunning })
        // Asleep, then gone: a handful of rounds, not millions.
        #expect(group.committerState.rounds - roundsBefore < 10, "\(group.committerState.rounds - roundsBefore) rounds")
    }

    /// Completions wait while another thread commits, and are completed by that commit when it
    /// covers them, without a commit of the committer's own.
    @Test func completionsCoveredByAnotherCommitNeedNoCommit() throws {
        let group = GroupCommit(committerLinger: 0.05)
        let ownCommits = Atomic<Int>(0)
        let entered = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let syncDone = DispatchSemaphore(value: 0)
        Thread {
            _ = group.commit(through: 5) {
                entered.signal()
                release.wait()
                return .init(durableBelow: 6)
            }
            syncDone.signal()
        }.start()
        entered.wait()
        let completions = Mutex<[Int]>([])
        for ticket in [3, 1, 2] {
            group.whenStored(UInt64(ticket), commit: {
                ownCommits.add(1, ordering: .relaxed)
                return .init(durableBelow: 100)
            }) { error in
                completions.withLock { $0.append(error == nil ? ticket : -ticket) }
            }
        }
        release.signal()
        syncDone.wait()
        #expect(waitUntil { completions.withLock { $0.count } == 3 })
        #expect(completions.withLock { $0 } == [1, 2, 3], "in ticket order, all successful")
        #expect(ownCommits.load(ordering: .relaxed) == 0)
    }

    /// A failed commit completes the waiters it tried to store with its error; later ones get the
    /// next commit.
    @Test func aFailedCommitFailsTheWaitersItCovered() throws {
        let group = GroupCommit(committerLinger: 0.05)
        let attempts = Atomic<Int>(0)
        let results = Mutex<[UInt64: Bool]>([:])
        let gate = DispatchSemaphore(value: 0)
        let commit: @Sendable () -> GroupCommit.Outcome = {
            let attempt = attempts.add(1, ordering: .relaxed).newValue
            if attempt == 1 {
                gate.wait()
                return .init(durableBelow: nil, error: GeofencingError(.storageFailure, "disk full"), attemptedThrough: 1)
            }
            return .init(durableBelow: 3)
        }
        for ticket: UInt64 in [0, 1] {
            group.whenStored(ticket, commit: commit) { error in results.withLock { $0[ticket] = error == nil } }
        }
        // Registered during the failing commit, beyond what it tried to store.
        #expect(waitUntil { attempts.load(ordering: .relaxed) == 1 })
        group.whenStored(2, commit: commit) { error in results.withLock { $0[2] = error == nil } }
        gate.signal()
        #expect(waitUntil { results.withLock { $0.count } == 3 })
        #expect(results.withLock { $0 } == [0: false, 1: false, 2: true])
    }
}
