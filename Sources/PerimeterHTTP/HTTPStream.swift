import CMicroHTTPD
import Dispatch
import Synchronization

/// What all event streams of a server may hold unsent together
/// (``HTTPServer/Configuration/maximumBufferedStreamBytes``).
public final class HTTPStreamBudget: Sendable {
    /// The most bytes all streams may hold unsent (0: no limit).
    public let limit: Int
    let used = Atomic<Int>(0)

    /// A budget of `limit` bytes (0: no limit).
    public init(limit: Int) { self.limit = max(0, limit) }

    /// Bytes held unsent by all streams now.
    public var bytesInUse: Int { used.load(ordering: .relaxed) }

    /// Takes `count` bytes unless that would pass the limit while `own` (the stream's unsent bytes)
    /// exceed 64 KiB: a client that keeps up holds next to nothing, so it is the ones behind that
    /// are cut when the budget runs out.
    func take(_ count: Int, own: Int) -> Bool {
        let now = used.add(count, ordering: .relaxed).newValue
        if limit > 0, now > limit, own > 64 << 10 {
            used.subtract(count, ordering: .relaxed)
            return false
        }
        return true
    }

    func give(_ count: Int) {
        if count > 0 { used.subtract(count, ordering: .relaxed) }
    }
}

/// A response body written over time, for Server-Sent Events: the handler returns it inside an
/// ``HTTPResponse``, keeps a reference, and calls ``write(_:)`` from any thread until ``finish()``.
///
/// Bytes are buffered until the connection can take them; while nothing is buffered the connection is
/// suspended, so an idle stream costs no thread. A stream is closed when the client goes away (noticed on
/// the next write), when the server stops, or after ``finish()`` once everything was sent.
///
/// A client that does not read is cut: once a write would take its unsent bytes past ``bufferLimit``
/// (or all streams' past their ``HTTPStreamBudget``), the buffer is dropped and the connection closed at
/// once — not after sending what was buffered, which a stalled client would never take — so a stalled
/// client costs bounded memory; an SSE client then reconnects and resumes with `Last-Event-ID`.
public final class HTTPStream: Sendable {
    struct State: ~Copyable {
        var buffer: [UInt8] = []
        var offset = 0
        var finished = false
        var closed = false
        /// Cut for falling behind: the connection is closed without sending the rest.
        var aborted = false
        var suspended = false
        var connection: LoopConnection?
        /// Called when the buffer ran empty (``onDrain(_:)``).
        var drain: (@Sendable () -> Void)?
    }

    let state = Mutex(State())
    let closeHandler = Mutex<(@Sendable () -> Void)?>(nil)
    /// Most bytes buffered for a client that does not read: a write that would pass it cuts the
    /// stream (its connection is closed and the buffer dropped).
    public let bufferLimit: Int
    /// The budget shared with the server's other streams, if any.
    let budget: HTTPStreamBudget?

    /// Creates an open stream buffering at most `bufferLimit` unsent bytes (8 MiB), and drawing on
    /// `budget` (shared by the server's streams) when given.
    public init(bufferLimit: Int = 8 << 20, budget: HTTPStreamBudget? = nil) {
        self.bufferLimit = max(1, bufferLimit)
        self.budget = budget
    }

    /// Calls `handler` once when the stream closes (client gone, server stopping, or finished and sent).
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { $0.closed }
        if runNow {
            handler()
        } else {
            closeHandler.withLock { $0 = handler }
        }
    }

    /// Appends `bytes` to the stream.
    /// - Returns: `false` when the stream is closed or finished (the bytes are dropped), or when the
    ///   unsent bytes would pass ``bufferLimit`` or the shared budget (the stream is then cut).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        enum Next { case none, resume(LoopConnection), cut(LoopConnection?) }
        let (accepted, next) = state.withLock { s -> (Bool, Next) in
            guard !s.closed, !s.finished else { return (false, .none) }
            let unsent = s.buffer.count - s.offset
            if unsent + bytes.count > bufferLimit || !(budget?.take(bytes.count, own: unsent) ?? true) {
                budget?.give(unsent)
                s.finished = true
                s.aborted = true
                s.buffer = []
                s.offset = 0
                return (false, .cut(s.connection))
            }
            s.buffer.append(contentsOf: bytes)
            return (true, s.takeSuspended().map(Next.resume) ?? .none)
        }
        switch next {
        case .none: break
        case .resume(let connection): connection.resume()
        case .cut(let connection): connection?.abort(self)
        }
        return accepted
    }

    /// Ends the stream after what was written so far has been sent.
    public func finish() {
        let resume = state.withLock { s -> LoopConnection? in
            s.finished = true
            return s.takeSuspended()
        }
        if let resume { resume.resume() }
    }

    /// Whether the stream is closed or finished (writes are refused).
    public var isClosed: Bool { state.withLock { $0.closed || $0.finished } }

    /// Whether the stream was cut for falling behind.
    public var wasCut: Bool { state.withLock { $0.aborted } }

    /// On the connection's loop thread: closes the connection of a cut stream (the response is still
    /// held by libmicrohttpd while `closed` is false, so the connection is valid). A suspended one is
    /// resumed instead: its reader then ends it with an error, which closes it.
    func cutOnLoopThread() {
        state.withLock { s in
            guard !s.closed, let connection = s.connection else { return }
            perimeter_mhd_shut_down(connection.connection.pointer)
            if s.suspended {
                s.suspended = false
                MHD_resume_connection(connection.connection.pointer)
            }
        }
    }

    /// Called by the transport on its own thread: copies buffered bytes out, or suspends the connection.
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        let (result, drained) = state.withLock { s -> (Int, (@Sendable () -> Void)?) in
            if s.aborted { return (Int(perimeter_mhd_end_with_error()), nil) }
            let available = s.buffer.count - s.offset
            if available > 0 {
                let count = min(available, maximum)
                s.buffer.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(destination).copyMemory(from: raw.baseAddress! + s.offset, byteCount: count)
                }
                s.offset += count
                budget?.give(count)
                if s.offset == s.buffer.count {
                    // A burst's large buffer is given back, not kept for a client that may stay idle.
                    s.buffer.removeAll(keepingCapacity: s.buffer.capacity <= 65_536)
                    s.offset = 0
                } else if s.offset > 65_536 {
                    s.buffer.removeFirst(s.offset)
                    s.offset = 0
                }
                return (count, nil)
            }
            if s.finished || s.closed { return (Int(perimeter_mhd_end_of_stream()), nil) }
            if let connection = s.connection {
                s.suspended = true
                connection.suspend()
            }
            return (0, s.drain)
        }
        if let drained { DispatchQueue.global().async { drained() } }
        return result
    }

    /// Calls `handler` on another thread each time the client has taken everything written so far,
    /// until it is set to `nil`: a writer with much to send (a replay of the log) writes a bounded
    /// amount at a time and the rest when asked.
    public func onDrain(_ handler: (@Sendable () -> Void)?) {
        state.withLock { $0.drain = handler }
    }

    /// Bytes written and not yet taken by the connection.
    public var unsentByteCount: Int { state.withLock { $0.buffer.count - $0.offset } }

    /// Called by the transport when the response is released.
    func markClosed() {
        state.withLock { s in
            s.closed = true
            s.connection = nil
            s.suspended = false
            s.drain = nil
            budget?.give(s.buffer.count - s.offset)
            s.buffer = []
            s.offset = 0
        }
        let handler = closeHandler.withLock { h -> (@Sendable () -> Void)? in
            defer { h = nil }
            return h
        }
        handler?()
    }

    func attach(_ connection: LoopConnection) {
        state.withLock { $0.connection = connection }
    }
}

extension HTTPStream.State {
    mutating func takeSuspended() -> LoopConnection? {
        guard suspended, let connection else { return nil }
        suspended = false
        return connection
    }
}
