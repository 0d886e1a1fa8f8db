import CMicroHTTPD
import Synchronization

/// How a handler answers one request: now, or later from any thread.
///
/// A handler registered with ``HTTPServer/init(configuration:responder:)`` receives a responder with each
/// request and calls ``respond(_:)`` (or ``respond(building:)``) exactly once. When it answers before it
/// returns, the response is sent at once. When it answers later — after a commit that other requests
/// share, say — the connection is suspended in the meantime, so the loop's thread goes on serving other
/// connections instead of waiting.
///
/// A second answer is ignored. A request that is never answered keeps its connection until the server
/// stops, which then answers it with `503 Service Unavailable`.
public final class HTTPResponder: Sendable {
    struct State: ~Copyable {
        /// Builds the response; set by the first answer.
        var answer: (@Sendable () -> HTTPResponse)?
        /// Whether ``answer`` was taken by the transport (later answers are ignored).
        var taken = false
        /// Whether the connection is suspended, waiting for the answer.
        var suspended = false
    }

    let state = Mutex(State())
    /// The connection, valid while the request is in flight (`nil` for responders made by tests).
    let connection: LoopConnection?

    init(connection: LoopConnection?) {
        self.connection = connection
    }

    /// Sends `response` (the first answer wins; later ones are ignored).
    public func respond(_ response: HTTPResponse) {
        respond { response }
    }

    /// Answers with the response `build` returns, run on the transport's thread just before the
    /// response is queued: for a responder answered from a thread that should not spend time on it (a
    /// committer that completes many requests at once). `build` must not block.
    public func respond(building build: @escaping @Sendable () -> HTTPResponse) {
        let resume = state.withLock { s -> Bool in
            guard s.answer == nil, !s.taken else { return false }
            s.answer = build
            defer { s.suspended = false }
            return s.suspended
        }
        if resume, let connection { connection.resume() }
    }

    /// Whether an answer was given.
    public var hasAnswered: Bool { state.withLock { $0.answer != nil || $0.taken } }

    /// The transport's step after the handler returned (or after the connection was resumed): the answer
    /// when there is one (taken: it is not given out twice), or `nil` after suspending the connection
    /// until ``respond(building:)`` resumes it.
    func takeAnswerOrSuspend() -> (@Sendable () -> HTTPResponse)? {
        take(suspending: true)
    }

    /// The answer given so far, taken; `nil` (and nothing suspended) when there is none yet.
    func takeAnswer() -> (@Sendable () -> HTTPResponse)? {
        take(suspending: false)
    }

    private func take(suspending: Bool) -> (@Sendable () -> HTTPResponse)? {
        state.withLock { s -> (@Sendable () -> HTTPResponse)? in
            if let answer = s.answer {
                s.answer = nil
                s.taken = true
                return answer
            }
            guard suspending, !s.taken, let connection else { return nil }
            // Suspended with the lock held, so that an answer arriving meanwhile resumes only after this.
            s.suspended = true
            connection.suspend()
            return nil
        }
    }
}
