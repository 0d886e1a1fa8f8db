// A ten-line check that ThreadSanitizer on Linux does not see Synchronization.Mutex's hand-over under
// contention (docs/reliability.md, "Sanitizers"): four threads add to a dictionary only inside
// withLock, yet TSan reports races. Run: swiftc -sanitize=thread -O mutex-tsan-check.swift -o /tmp/m && /tmp/m
import Foundation
import Synchronization
struct State { var counts: [Int: Int] = [:] }
final class Box: Sendable { let state = Mutex(State()) }
let box = Box()
let group = DispatchGroup()
for t in 0..<4 {
    Thread.detachNewThread {
        group.enter()
        for i in 0..<200_000 { box.state.withLock { $0.counts[i % 7, default: 0] += t } }
        group.leave()
    }
}
Thread.sleep(forTimeInterval: 0.2)
group.wait()
print(box.state.withLock { $0.counts.count })
