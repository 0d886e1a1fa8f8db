import CMicroHTTPD
import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: a few event-loop threads, keep-alive, streamed responses and a
/// graceful stop. Requests are handed to one handler on the loops' threads.
///
/// ``HTTPRequest/path`` is the path exactly as the client sent it (still percent-encoded), so that a
/// router can split it on `/` before decoding each segment: `/v1/fences/a%2Fb` has the two segments
/// `v1`, `fences` and one more that decodes to `a/b`. Query arguments are decoded.
///
/// Open streams cost no thread (their connections are suspended while idle); the number of
/// connections is bounded by ``Configuration/maximumConnections`` and the descriptor limit.
///
/// ```swift
/// let server = try HTTPServer(configuration: .init(port: 0)) { request in
///     HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("hello".utf8))
/// }
/// print(server.port)
/// server.stop()
/// ```
public final class HTTPServer: Sendable {
    /// Handles one request; called concurrently from the loops' threads.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse
    /// Handles one request and answers it through the responder, before returning or later from any
    /// thread; called concurrently from the loops' threads.
    public typealias ResponderHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

    struct State: ~Copyable {
        /// The event loops, one per thread (empty once stopped).
        var loops: [EventLoop] = []
        /// The listening socket the loops' daemons share (closed by ``stop(drainTimeout:)``, once).
        var listenSocket: Int32 = -1
        var quiesced = false
        var inFlight = 0
        var streams: [ObjectIdentifier: HTTPStream] = [:]
        /// Requests whose connection is suspended until their handler answers.
        var waiting: [ObjectIdentifier: HTTPResponder] = [:]
        var port: UInt16 = 0
        /// Requests whose connection was suspended to wait for their answer (for tests).
        var suspensions = 0
    }

    /// The configuration the server was started with.
    public let configuration: Configuration
    /// What the server's event streams may hold unsent together
    /// (``Configuration/maximumBufferedStreamBytes``): give it to each ``HTTPStream``.
    public let streamBudget: HTTPStreamBudget
    /// The limits the loops' daemons share (freed once they stopped).
    let guardHandle: CPointer<perimeter_mhd_guard>
    /// The port actually bound (the configured one, or the one the system chose for port 0).
    public var port: UInt16 { state.withLock { $0.port } }
    let handler: ResponderHandler
    let state = Mutex(State())

    /// Starts listening immediately; `handler` answers each request before it returns.
    /// - Throws: ``HTTPServerError`` when the address is not an IP literal or the port cannot be bound.
    public convenience init(configuration: Configuration, handler: @escaping Handler) throws(HTTPServerError) {
        try self.init(configuration: configuration) { request, responder in responder.respond(handler(request)) }
    }

    /// Starts listening immediately; `responder` answers each request through its ``HTTPResponder``, at
    /// once or later. While an answer is pending the request's connection is suspended: it holds no
    /// thread, so a few threads serve many requests that wait (on a shared commit, say).
    ///
    /// Each of the ``Configuration/threads`` threads is an event loop with connections of its own: it
    /// waits until some are ready, handles them all (a *round*), then calls `afterEachRound`, and
    /// starts over. The hook is the place to finish work that the round's requests share — commit what
    /// they changed once, then answer them all — before the loop goes back to its sockets. It returns
    /// whether it answered requests: the loop then sends those answers at once (handling whatever else
    /// is ready meanwhile) and calls the hook again, until it returns `false`.
    /// - Throws: ``HTTPServerError`` when the address is not an IP literal or the port cannot be bound.
    public init(configuration: Configuration, responder: @escaping ResponderHandler,
                afterEachRound: (@Sendable () -> Bool)? = nil) throws(HTTPServerError) {
        self.configuration = configuration
        self.handler = responder
        self.streamBudget = HTTPStreamBudget(limit: configuration.maximumBufferedStreamBytes)
        let deadline = configuration.requestDeadline > 0 ? UInt64((configuration.requestDeadline * 1000).rounded(.up)) : 0
        guard let guardPointer = perimeter_mhd_guard_new(UInt32(clamping: max(0, configuration.maximumConnectionsPerAddress)),
                                                         deadline) else {
            throw HTTPServerError("cannot start the server: out of memory")
        }
        self.guardHandle = CPointer(pointer: guardPointer)
        let failure = HTTPServerError(
            "cannot listen on \(configuration.address) port \(configuration.port): the address must be an IPv4 or IPv6 literal, the port free and permitted")
        // One listening socket, shared by the loops' daemons: binding it is where a port in use fails.
        let listenSocket = perimeter_listen_socket(configuration.address, configuration.port)
        guard listenSocket >= 0 else {
            perimeter_mhd_guard_free(guardPointer)
            throw failure
        }
        let port = perimeter_socket_port(listenSocket)
        let context = Unmanaged.passUnretained(self).toOpaque()
        let count = max(1, configuration.threads)
        let limit = max(1, Self.connectionLimit(configuration) / count)
        var loops: [EventLoop] = []
        for _ in 0..<count {
            let connections = perimeter_mhd_loop_state_new(guardPointer)
            let daemon = connections.flatMap { connections in
                perimeter_mhd_start_loop(
                    listenSocket, UInt32(max(0, configuration.connectionTimeout)), UInt32(limit),
                    max(4 << 10, configuration.connectionMemory),
                    Self.rawPathAccessHandler, context, Self.completedHandler, context, connections)
            }
            guard let daemon, let connections, let loop = EventLoop(daemon: daemon, connections: connections) else {
                // Quiesced first, so that no daemon closes the shared socket.
                if let daemon {
                    _ = MHD_quiesce_daemon(daemon)
                    MHD_stop_daemon(daemon)
                }
                perimeter_mhd_loop_state_free(connections)
                for loop in loops {
                    loop.discard()
                    _ = MHD_quiesce_daemon(loop.daemon.pointer)
                    MHD_stop_daemon(loop.daemon.pointer)
                    perimeter_mhd_loop_state_free(loop.connections.pointer)
                }
                close(listenSocket)
                perimeter_mhd_guard_free(guardPointer)
                throw failure
            }
            loops.append(loop)
        }
        state.withLock {
            $0.loops = loops
            $0.listenSocket = listenSocket
            $0.port = port
        }
        for (index, loop) in loops.enumerated() {
            loop.start(name: "perimeter-http-\(index)", afterEachRound: afterEachRound)
        }
    }

    deinit { stop(drainTimeout: 0) }

    /// Whether the server still accepts connections.
    public var isRunning: Bool { state.withLock { !$0.loops.isEmpty && !$0.quiesced } }

    /// Connections refused because their client address had
    /// ``Configuration/maximumConnectionsPerAddress`` open, and connections closed because their request
    /// missed ``Configuration/requestDeadline``, since the start.
    public var refusals: (perAddress: UInt64, pastDeadline: UInt64) {
        state.withLock { s -> (UInt64, UInt64) in
            guard !s.loops.isEmpty else { return (0, 0) }
            var refused: UInt64 = 0, late: UInt64 = 0
            perimeter_mhd_guard_counters(guardHandle.pointer, &refused, &late)
            return (refused, late)
        }
    }

    /// Requests being handled right now (streams included).
    public var inFlightRequests: Int { state.withLock { $0.inFlight } }

    /// Requests whose connection was suspended until their answer came (answers given by the round
    /// hook need none).
    var suspensions: Int { state.withLock { $0.suspensions } }

    /// Stops gracefully: stops accepting connections, finishes every open stream, waits up to
    /// `drainTimeout` seconds for in-flight requests to complete, then closes every connection.
    /// Safe to call more than once.
    public func stop(drainTimeout: Double = 10) {
        let streams = state.withLock { s -> [HTTPStream]? in
            guard !s.loops.isEmpty else { return nil }
            if !s.quiesced {
                // Each daemon stops accepting and gives the shared socket back (closed below, once).
                s.quiesced = true
                for loop in s.loops { _ = MHD_quiesce_daemon(loop.daemon.pointer) }
            }
            return Array(s.streams.values)
        }
        guard let streams else { return }
        for stream in streams { stream.finish() }
        let deadline = Date().addingTimeInterval(drainTimeout)
        while state.withLock({ $0.inFlight > 0 }) && Date() < deadline {
            usleep(5_000)
        }
        // Connections still suspended must be resumed before the daemon stops (libmicrohttpd's rule).
        for stream in state.withLock({ Array($0.streams.values) }) { stream.finish() }
        for responder in state.withLock({ Array($0.waiting.values) }) {
            responder.respond(configuration.transportError(503, "the server stopped before this request was answered", ""))
        }
        if state.withLock({ !$0.waiting.isEmpty }) {
            // Let the loops send those answers (the connections were resumed just now).
            let answered = Date().addingTimeInterval(1)
            while state.withLock({ !$0.waiting.isEmpty }) && Date() < answered { usleep(1_000) }
        }
        let (loops, socket) = state.withLock { s -> ([EventLoop], Int32) in
            defer { s.loops = []; s.listenSocket = -1 }
            return (s.loops, s.listenSocket)
        }
        let guardHandle = self.guardHandle
        let teardown: @Sendable () -> Void = {
            for loop in loops { loop.join() }
            for loop in loops { MHD_stop_daemon(loop.daemon.pointer) }
            for loop in loops { perimeter_mhd_loop_state_free(loop.connections.pointer) }
            if socket >= 0 { close(socket) }
            if !loops.isEmpty { perimeter_mhd_guard_free(guardHandle.pointer) }
        }
        if loops.contains(where: \.isLoopThread) {
            // Stopped from one of the loops (a handler, or the server's last reference dropped there):
            // that loop can neither wait for itself nor stop its daemon inside its own round, so the
            // teardown finishes on another thread once the loops have ended.
            Thread { teardown() }.start()
        } else {
            teardown()
        }
    }

    /// The connection limit handed to libmicrohttpd: the configured one, after raising the soft
    /// descriptor limit toward it, lowered to what the descriptors allow (each connection needs one,
    /// plus a reserve for the store, the listening sockets and the loops' wake-up channels).
    static func connectionLimit(_ configuration: Configuration) -> Int {
        let wanted = max(1, configuration.maximumConnections)
        let reserve = 64 + 2 * max(1, configuration.threads)
        let available = perimeter_raise_descriptor_limit(UInt64(wanted + reserve))
        let allowed = available > UInt64(reserve + 16) ? Int(min(available - UInt64(reserve), UInt64(Int32.max))) : 16
        return min(wanted, allowed)
    }

    /// Hands libmicrohttpd's request to ``accessHandler`` with the raw (undecoded) request path in
    /// place of the decoded one, so ids containing `/` (sent as `%2F`) can be routed.
    static let rawPathAccessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadSize, contextSlot in
        let raw = connection.flatMap { perimeter_mhd_raw_path($0) }
        return accessHandler(cls, connection, raw ?? url, method, version, uploadData, uploadSize, contextSlot)
    }

    /// Makes every loop run a round now, calling its round hook (from a loop's own thread, that loop
    /// is left alone: it runs its hook again after the current one anyway).
    public func wakeLoops() {
        for loop in state.withLock({ $0.loops }) { loop.wakeUp() }
    }

    /// `connection` with the loop that serves it.
    func loopConnection(_ connection: OpaquePointer) -> LoopConnection {
        let daemon = perimeter_mhd_connection_daemon(connection)
        let loop = state.withLock { s in s.loops.first { $0.daemon.pointer == daemon } }
        return LoopConnection(connection: CHandle(pointer: connection), loop: loop)
    }

    func register(_ stream: HTTPStream) {
        state.withLock { $0.streams[ObjectIdentifier(stream)] = stream }
    }

    func unregister(_ stream: HTTPStream) {
        _ = state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
    }

    func register(_ responder: HTTPResponder) {
        state.withLock { $0.waiting[ObjectIdentifier(responder)] = responder }
    }

    func unregister(_ responder: HTTPResponder) {
        _ = state.withLock { $0.waiting.removeValue(forKey: ObjectIdentifier(responder)) }
    }
}
