import Foundation
import Synchronization

/// SIGINT and SIGTERM turned into a flag that a blocking loop can wait on, for as long as the object is
/// installed; ``restore()`` puts the previous dispositions back (in-process tests run commands that
/// install it, and the test process must not keep ignoring Ctrl-C).
///
/// The signals are ignored at the process level and delivered through dispatch sources instead, so
/// they arrive on a dispatch queue, never interrupting a thread in the middle of a lock.
final class StopSignals: @unchecked Sendable {
    // @unchecked: `sources` and `previous` are written only by `init` and `restore()`, which the owning
    // thread calls; the signal handlers touch only `semaphore` (Sendable) and `received` (atomic).
    private let semaphore = DispatchSemaphore(value: 0)
    private let received = Atomic<Int32>(0)
    private var sources: [any DispatchSourceSignal] = []
    private var previous: [(Int32, (@convention(c) (Int32) -> Void)?)] = []

    /// Starts catching SIGINT and SIGTERM.
    init() {
        for number in [SIGINT, SIGTERM] {
            previous.append((number, signal(number, SIG_IGN)))
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            // Holds `self` until `restore()` cancels the source (and clears `sources`).
            source.setEventHandler { [self] in
                received.store(number, ordering: .releasing)
                semaphore.signal()
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The signal that arrived (SIGINT or SIGTERM), or `nil` when none did yet.
    var signalReceived: Int32? {
        let number = received.load(ordering: .acquiring)
        return number == 0 ? nil : number
    }

    /// Blocks until a signal arrives or `deadline` passes; `true` when a signal arrived (now or before).
    func wait(until deadline: DispatchTime) -> Bool {
        if signalReceived != nil { return true }
        _ = semaphore.wait(timeout: deadline)
        return signalReceived != nil
    }

    /// Blocks until a signal arrives.
    func wait() {
        while !wait(until: .distantFuture) {}
    }

    /// Stops catching and restores the dispositions found at ``init()``. Safe to call twice.
    func restore() {
        for source in sources { source.cancel() }
        sources = []
        for (number, handler) in previous { signal(number, handler) }
        previous = []
    }
}
