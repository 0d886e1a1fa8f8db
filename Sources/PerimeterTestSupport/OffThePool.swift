import Foundation

/// Runs `body` on a thread of its own and suspends until it returns, for blocking work in an async
/// test: a child process to read to its end, a socket, a driver that answers slowly.
///
/// Swift Testing runs tests on Swift's concurrency pool, which has one thread per core (two on the CI
/// machine). A test that blocks one of them for a minute leaves the other tests — and the servers
/// they run, whose callbacks need the pool too — one thread or none, and their deadlines run out.
///
/// `body` runs outside the test's task, so it should throw rather than record issues (`#expect`).
public func offThePool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<T, any Error>) in
        let thread = Thread {
            do {
                done.resume(returning: try body())
            } catch {
                done.resume(throwing: error)
            }
        }
        thread.name = "test: off the pool"
        thread.start()
    }
}
