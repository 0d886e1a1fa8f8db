import Dispatch
import PerimeterHTTP
import Synchronization

/// Where ``PerimeterAPI/handle(_:responder:committer:)`` sends the one answer to a request: the
/// transport's ``HTTPResponder`` in the server, a ``CollectingResponder`` in process.
///
/// The contract is the transport's: the first answer wins, later ones are ignored; a `build` closure runs
/// once, on the thread that takes the answer, not on the one that gives it.
public protocol APIResponder: Sendable {
    /// Answers with `response`.
    func respond(_ response: HTTPResponse)
    /// Answers with the response `build` returns, built by whoever takes the answer.
    func respond(building build: @escaping @Sendable () -> HTTPResponse)
}

extension HTTPResponder: APIResponder {}

/// A responder for in-process callers and tests: collects the answer of
/// ``PerimeterAPI/handle(_:responder:committer:)`` (given at once or later, from any thread) and hands
/// it to ``response(timeout:)``. Keeps the transport's contract: the first answer wins, later ones are
/// ignored (and counted in ``answerCount``).
///
/// ```swift
/// let responder = CollectingResponder()
/// api.handle(HTTPRequest(method: "GET", path: "/healthz"), responder: responder)
/// let response = responder.response()
/// ```
public final class CollectingResponder: APIResponder {
    private struct State {
        var build: (@Sendable () -> HTTPResponse)?
        var built: HTTPResponse?
        var answers = 0
    }

    private let state = Mutex(State())
    private let answered = DispatchSemaphore(value: 0)

    /// Creates a responder that has no answer yet.
    public init() {}

    /// Answers with `response` (the first answer wins).
    public func respond(_ response: HTTPResponse) {
        respond { response }
    }

    /// Answers with what `build` returns; it runs in ``response(timeout:)``, on the caller's thread.
    public func respond(building build: @escaping @Sendable () -> HTTPResponse) {
        let first = state.withLock { s -> Bool in
            s.answers += 1
            guard s.answers == 1 else { return false }
            s.build = build
            return true
        }
        if first { answered.signal() }
    }

    /// How many answers were given (the API gives exactly one per request).
    public var answerCount: Int { state.withLock { $0.answers } }

    /// The answer, waiting up to `timeout` seconds for it; `nil` when none came in time. Asked again,
    /// it returns the same response.
    public func response(timeout: Double = 60) -> HTTPResponse? {
        if let built = state.withLock({ $0.built }) { return built }
        guard answered.wait(timeout: .now() + timeout) == .success else { return nil }
        answered.signal()  // so that a second call does not wait
        return state.withLock { s -> HTTPResponse? in
            if let built = s.built { return built }
            let response = s.build?()
            s.built = response
            s.build = nil
            return response
        }
    }
}
