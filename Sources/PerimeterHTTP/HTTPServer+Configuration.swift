extension HTTPServer {
    /// Where and how an ``HTTPServer`` listens.
    public struct Configuration: Sendable {
        /// The address to bind: an IPv4 or IPv6 literal (`127.0.0.1`, `0.0.0.0`, `::1`).
        public var address: String
        /// The port; 0 asks the system for a free one (read it back from ``HTTPServer/port``).
        public var port: UInt16
        /// Event-loop threads that serve connections (at least 1): each serves the connections it
        /// accepted (a loop that is ready takes the next new one) and runs its own round hook.
        public var threads: Int
        /// A request declaring a larger body (`Content-Length`) is answered `413` through
        /// ``transportError`` before its body is sent, and its connection closed; a chunked body that
        /// grows larger is read, discarded and flagged ``HTTPRequest/isBodyTooLarge``.
        public var maximumBodySize: Int
        /// Seconds after which an idle connection is closed (0: never).
        public var connectionTimeout: Int
        /// Bytes of buffer per connection: the request line and headers, body chunks on their way to the
        /// handler, the response's headers. A request whose line and headers do not fit is answered
        /// `431`. libmicrohttpd clears the buffer for every request, so a smaller one is cheaper: 16 KiB
        /// (libmicrohttpd's default is 32 KiB) holds any ordinary request head.
        public var connectionMemory: Int = 16 << 10
        /// Most connections open at once (streams included), shared evenly by the loops;
        /// further clients wait in the listen backlog until one closes. The server raises the process's
        /// soft limit on open descriptors toward this (within the hard limit), and lowers the connection
        /// limit to what the descriptors allow.
        public var maximumConnections: Int
        /// Most connections open at once from one client address (0: no limit). Further connections
        /// from that address are closed as soon as they are accepted, before any buffer is given to
        /// them, so a client opening thousands of idle sockets cannot take the slots of the others.
        public var maximumConnectionsPerAddress: Int
        /// Seconds a connection has to deliver one whole request — line, headers and body — counted
        /// from when it opened or its previous response was sent (0: no deadline). libmicrohttpd's idle
        /// timeout restarts with every byte received, so without it a client sending one byte every
        /// few seconds would hold its connection forever. An idle keep-alive connection counts as
        /// waiting for its next request and is closed at the deadline too.
        public var requestDeadline: Double
        /// Bytes that all event streams together may hold unsent (0: no limit): a stream whose write
        /// would pass it while it holds more than 64 KiB unsent itself is cut (see ``HTTPStream``).
        public var maximumBufferedStreamBytes: Int
        /// Builds the answer to a request the transport refuses itself (bad framing, server stopping):
        /// status and a sentence saying what was wrong. The server gives one that answers with its
        /// problem documents; the default is plain text.
        public var transportError: @Sendable (_ status: Int, _ detail: String, _ path: String) -> HTTPResponse

        /// Creates a configuration.
        public init(address: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = 2,
                    maximumBodySize: Int = 16 << 20, connectionTimeout: Int = 60, maximumConnections: Int = 4096,
                    maximumConnectionsPerAddress: Int = 256, requestDeadline: Double = 30,
                    maximumBufferedStreamBytes: Int = 256 << 20,
                    transportError: @escaping @Sendable (_ status: Int, _ detail: String, _ path: String) -> HTTPResponse
                        = HTTPServer.plainTextError) {
            self.address = address
            self.port = port
            self.threads = threads
            self.maximumBodySize = maximumBodySize
            self.connectionTimeout = connectionTimeout
            self.maximumConnections = maximumConnections
            self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
            self.requestDeadline = requestDeadline
            self.maximumBufferedStreamBytes = maximumBufferedStreamBytes
            self.transportError = transportError
        }
    }
}

extension HTTPServer {
    /// The default ``Configuration/transportError``: the detail as `text/plain`.
    public static let plainTextError: @Sendable (Int, String, String) -> HTTPResponse = { status, detail, _ in
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", bytes: Array((detail + "\n").utf8))
    }
}
