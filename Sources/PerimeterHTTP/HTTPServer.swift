import CMicroHTTPD
import Foundation
import Synchronization

/// An HTTP/1.1 server on libmicrohttpd: an internal thread pool, keep-alive, streamed responses and a
/// graceful stop. Requests are handed to one synchronous handler on the pool's threads.
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
    /// Handles one request; called concurrently from the pool's threads.
    public typealias Handler = @Sendable (HTTPRequest) -> HTTPResponse
    /// Handles one request and answers it through the responder, before returning or later from any
    /// thread; called concurrently from the pool's threads.
    public typealias ResponderHandler = @Sendable (HTTPRequest, HTTPResponder) -> Void

    struct State: ~Copyable {
        var daemon: CHandle?
        var listenSocket: Int32 = -1
        var inFlight = 0
        var streams: [ObjectIdentifier: HTTPStream] = [:]
        /// Requests whose connection is suspended until their handler answers.
        var waiting: [ObjectIdentifier: HTTPResponder] = [:]
        var port: UInt16 = 0
    }

    /// The configuration the server was started with.
    public let configuration: Configuration
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
    /// thread, so a pool of a few threads serves many requests that wait (on a shared commit, say).
    /// - Throws: ``HTTPServerError`` when the address is not an IP literal or the port cannot be bound.
    public init(configuration: Configuration, responder: @escaping ResponderHandler) throws(HTTPServerError) {
        self.configuration = configuration
        self.handler = responder
        let context = Unmanaged.passUnretained(self).toOpaque()
        let daemon = perimeter_mhd_start(
            configuration.address, configuration.port, UInt32(max(1, configuration.threads)),
            UInt32(max(0, configuration.connectionTimeout)), UInt32(Self.connectionLimit(configuration)),
            Self.rawPathAccessHandler, context, Self.completedHandler, context)
        guard let daemon else {
            throw HTTPServerError(
                "cannot listen on \(configuration.address) port \(configuration.port): the address must be an IPv4 or IPv6 literal, the port free and permitted")
        }
        let port = perimeter_mhd_bound_port(daemon)
        state.withLock {
            $0.daemon = CHandle(pointer: daemon)
            $0.port = port
        }
    }

    deinit { stop(drainTimeout: 0) }

    /// Whether the server still accepts connections.
    public var isRunning: Bool { state.withLock { $0.daemon != nil && $0.listenSocket < 0 } }

    /// Requests being handled right now (streams included).
    public var inFlightRequests: Int { state.withLock { $0.inFlight } }

    /// Stops gracefully: stops accepting connections, finishes every open stream, waits up to
    /// `drainTimeout` seconds for in-flight requests to complete, then closes every connection.
    /// Safe to call more than once.
    public func stop(drainTimeout: Double = 10) {
        let (daemon, streams) = state.withLock { s -> (CHandle?, [HTTPStream]) in
            guard let daemon = s.daemon else { return (nil, []) }
            if s.listenSocket < 0 { s.listenSocket = MHD_quiesce_daemon(daemon.pointer) }
            return (daemon, Array(s.streams.values))
        }
        guard let daemon else { return }
        for stream in streams { stream.finish() }
        let deadline = Date().addingTimeInterval(drainTimeout)
        while state.withLock({ $0.inFlight > 0 }) && Date() < deadline {
            usleep(5_000)
        }
        // Connections still suspended must be resumed before the daemon stops (libmicrohttpd's rule).
        for stream in state.withLock({ Array($0.streams.values) }) { stream.finish() }
        for responder in state.withLock({ Array($0.waiting.values) }) {
            responder.respond(HTTPResponse(status: 503, contentType: "text/plain",
                                           bytes: Array("the server stopped before this request was answered\n".utf8)))
        }
        if state.withLock({ !$0.waiting.isEmpty }) {
            // Let the pool's threads send those answers (the connections were resumed just now).
            let answered = Date().addingTimeInterval(1)
            while state.withLock({ !$0.waiting.isEmpty }) && Date() < answered { usleep(1_000) }
        }
        let socket = state.withLock { s -> Int32 in
            s.daemon = nil
            return s.listenSocket
        }
        MHD_stop_daemon(daemon.pointer)
        if socket >= 0 { close(socket) }
    }

    /// The connection limit handed to libmicrohttpd: the configured one, after raising the soft
    /// descriptor limit toward it, lowered to what the descriptors allow (each connection needs one,
    /// plus a reserve for the store, listening socket and the pool's wake-up channels).
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
