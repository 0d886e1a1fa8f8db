import CMicroHTTPD
import Synchronization

/// A response body written over time, for Server-Sent Events: the handler returns it inside an
/// ``HTTPResponse``, keeps a reference, and calls ``write(_:)`` from any thread until ``finish()``.
///
/// Bytes are buffered until the connection can take them; while nothing is buffered the connection is
/// suspended, so an idle stream costs no thread. A stream is closed when the client goes away (noticed on
/// the next write), when the server stops, or after ``finish()`` once everything was sent.
public final class HTTPStream: Sendable {
    struct State: ~Copyable {
        var buffer: [UInt8] = []
        var offset = 0
        var finished = false
        var closed = false
        var suspended = false
        var connection: LoopConnection?
    }

    let state = Mutex(State())
    let closeHandler = Mutex<(@Sendable () -> Void)?>(nil)
    /// Most bytes buffered for a client that does not read: a write that would pass it finishes the
    /// stream instead (what was buffered is still sent, then the stream ends), so a stalled client
    /// costs bounded memory; an SSE client then reconnects and resumes.
    public let bufferLimit: Int

    /// Creates an open stream buffering at most `bufferLimit` unsent bytes (8 MiB).
    public init(bufferLimit: Int = 8 << 20) {
        self.bufferLimit = max(1, bufferLimit)
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
    ///   unsent bytes would pass ``bufferLimit`` (the bytes are dropped and the stream finishes).
    @discardableResult
    public func write(_ bytes: [UInt8]) -> Bool {
        let (accepted, resume) = state.withLock { s -> (Bool, LoopConnection?) in
            guard !s.closed, !s.finished else { return (false, nil) }
            guard s.buffer.count - s.offset + bytes.count <= bufferLimit else {
                s.finished = true
                return (false, s.takeSuspended())
            }
            s.buffer.append(contentsOf: bytes)
            return (true, s.takeSuspended())
        }
        if let resume { resume.resume() }
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

    /// Called by the transport on its own thread: copies buffered bytes out, or suspends the connection.
    func read(into destination: UnsafeMutablePointer<CChar>, maximum: Int) -> Int {
        state.withLock { s -> Int in
            let available = s.buffer.count - s.offset
            if available > 0 {
                let count = min(available, maximum)
                s.buffer.withUnsafeBytes { raw in
                    UnsafeMutableRawPointer(destination).copyMemory(from: raw.baseAddress! + s.offset, byteCount: count)
                }
                s.offset += count
                if s.offset == s.buffer.count {
                    s.buffer.removeAll(keepingCapacity: true)
                    s.offset = 0
                } else if s.offset > 65_536 {
                    s.buffer.removeFirst(s.offset)
                    s.offset = 0
                }
                return count
            }
            if s.finished || s.closed { return Int(perimeter_mhd_end_of_stream()) }
            if let connection = s.connection {
                s.suspended = true
                connection.suspend()
            }
            return 0
        }
    }

    /// Called by the transport when the response is released.
    func markClosed() {
        state.withLock { s in
            s.closed = true
            s.connection = nil
            s.suspended = false
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
