import CMicroHTTPD
import Foundation
import Synchronization

/// One of the server's threads: it runs one libmicrohttpd daemon (accepting from the listening socket
/// all loops share, serving the connections it accepted) in rounds.
///
/// Each round waits until a socket is ready, a timeout is due or another thread woke the loop (after
/// resuming one of its connections), lets libmicrohttpd handle everything ready — reading requests,
/// calling the handler, sending answers — and then calls the server's round hook
/// (``HTTPServer/init(configuration:responder:afterEachRound:)``). The hook is where work that the
/// round's requests share gets done once (one store commit for every location post of the round);
/// when it answered requests, the loop hands them to libmicrohttpd at once and calls the hook again,
/// all on this thread: no hand-off to another thread and back.
///
/// A daemon without an internal thread has no wake-up channel of its own, so every resume of one of
/// its connections goes through ``LoopConnection/resume()``, which wakes the loop when called from
/// another thread.
final class EventLoop: @unchecked Sendable {
    // @unchecked: `daemon` is driven by this loop's thread only, until `join()` returned; the
    // descriptors are immutable; `stopping` is atomic and `owner` behind a mutex.
    let daemon: CHandle
    /// The daemon's connection list for the guard's limits (freed by the server after the daemon stopped).
    let connections: CPointer<perimeter_mhd_loop_state>
    /// Streams to cut (their client fell too far behind), taken by the loop's thread after each run.
    private let aborts = Mutex<[HTTPStream]>([])
    private let loop: Int32
    private let wake: Int32
    private let stopping = Atomic<Bool>(false)
    /// Whether a wake-up was written since the loop last woke (later ones need no write).
    private let wakePending = Atomic<Bool>(false)
    private let owner = Mutex<pthread_t?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    /// Opens the wait set of `daemon`.
    /// - Returns: `nil` when the descriptors cannot be created (out of descriptors).
    init?(daemon: OpaquePointer, connections: UnsafeMutablePointer<perimeter_mhd_loop_state>) {
        let wake = perimeter_wake_open()
        guard wake >= 0 else { return nil }
        let loop = perimeter_mhd_loop_open(daemon, wake)
        guard loop >= 0 else {
            close(wake)
            return nil
        }
        self.daemon = CHandle(pointer: daemon)
        self.connections = CPointer(pointer: connections)
        self.loop = loop
        self.wake = wake
    }

    /// Starts the loop's thread. `afterEachRound` returns whether it answered requests (which the loop
    /// then sends before it waits again).
    func start(name: String, afterEachRound: (@Sendable () -> Bool)?) {
        let thread = Thread { [self] in
            owner.withLock { $0 = pthread_self() }
            run(afterEachRound)
            finished.signal()
        }
        thread.name = name
        thread.start()
    }

    private func run(_ afterEachRound: (@Sendable () -> Bool)?) {
        while !stopping.load(ordering: .acquiring) {
            // At most a second per wait, so that connection timeouts are checked even when idle.
            perimeter_mhd_loop_wait(loop, daemon.pointer, wake, 1_000)
            // Before the round: a wake-up asked for after this point writes again.
            wakePending.store(false, ordering: .sequentiallyConsistent)
            repeat {
                _ = MHD_run(daemon.pointer)
                cutAbortedStreams()
            } while afterEachRound?() == true
            perimeter_mhd_enforce_deadlines(connections.pointer)
        }
    }

    /// Cuts `stream`'s connection on the loop's thread (soon: the loop is woken).
    func abort(_ stream: HTTPStream) {
        aborts.withLock { $0.append(stream) }
        if isLoopThread { return }
        wakeUp()
    }

    private func cutAbortedStreams() {
        let streams = aborts.withLock { list -> [HTTPStream] in
            defer { list.removeAll() }
            return list
        }
        for stream in streams { stream.cutOnLoopThread() }
    }

    /// Makes the loop's current or next wait return at once; nothing to do on the loop's own thread,
    /// which runs the daemon again before it waits.
    func wakeUp() {
        guard !isLoopThread, !wakePending.exchange(true, ordering: .sequentiallyConsistent) else { return }
        perimeter_wake(wake)
    }

    /// Closes the descriptors of a loop that was never started.
    func discard() {
        close(loop)
        close(wake)
    }

    /// Ends the loop after its current round and waits for its thread to end (never call it on that
    /// thread). The daemon is left as it is, for the caller to stop.
    func join() {
        stopping.store(true, ordering: .releasing)
        perimeter_wake(wake)
        finished.wait()
        close(loop)
        close(wake)
    }

    /// Whether the caller is this loop's thread.
    var isLoopThread: Bool {
        owner.withLock { owner in owner.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }
}

/// A connection of one event loop: suspended on the loop's thread (from the handler or a stream's
/// reader), resumed from any thread.
struct LoopConnection: Sendable {
    let connection: CHandle
    /// The loop serving the connection (`nil` only if it could not be found).
    let loop: EventLoop?

    /// Stops libmicrohttpd from working on the connection until ``resume()``. Call on the loop's thread,
    /// from a libmicrohttpd callback.
    func suspend() { MHD_suspend_connection(connection.pointer) }

    /// Closes the connection of `stream` on the loop's thread.
    func abort(_ stream: HTTPStream) { loop?.abort(stream) }

    /// Lets libmicrohttpd work on the connection again, and wakes its loop to do so.
    func resume() {
        MHD_resume_connection(connection.pointer)
        loop?.wakeUp()
    }
}
