// A check that ThreadSanitizer on Linux does not see Synchronization.Mutex's hand-over under contention
// (docs/reliability.md, "Sanitizers"): four threads change a dictionary only inside withLock.
//
//   swiftc -sanitize=thread -O scripts/sanitizers/mutex-tsan-check.swift -o /tmp/mutex-tsan-check
//   /tmp/mutex-tsan-check            TSan reports races inside withLock (this toolchain: Swift 6.3.1)
//   /tmp/mutex-tsan-check annotated  the same, but each critical section also tells TSan "acquired" at
//                                    its start and "released" at its end: no reports
//
// The second run differs from the first only in what TSan is told, not in what the threads do, so the
// reports of the first come from the lock's hand-over that TSan cannot see: when the lock is contended,
// Mutex's lock and unlock paths run in the uninstrumented Swift runtime and wait and wake in the kernel
// (a futex); only the uncontended compare-and-swap, inlined here, is instrumented.
import Foundation
import Synchronization

@_silgen_name("__tsan_acquire") func tsanAcquire(_ address: UnsafeMutableRawPointer)
@_silgen_name("__tsan_release") func tsanRelease(_ address: UnsafeMutableRawPointer)

struct State { var counts: [Int: Int] = [:] }
final class Box: Sendable { let state = Mutex(State()) }

let annotated = CommandLine.arguments.dropFirst().first == "annotated"
let token = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)  // the address TSan syncs on
nonisolated(unsafe) let sharedToken = token
let box = Box()
let group = DispatchGroup()
for t in 0..<4 {
    group.enter()
    Thread.detachNewThread {
        for i in 0..<200_000 {
            box.state.withLock { state in
                if annotated { tsanAcquire(sharedToken) }
                state.counts[i % 7, default: 0] += t
                if annotated { tsanRelease(sharedToken) }
            }
        }
        group.leave()
    }
}
group.wait()
print("\(box.state.withLock { $0.counts.count }) keys, annotated: \(annotated)")
