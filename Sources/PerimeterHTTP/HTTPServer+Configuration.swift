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
        /// Bodies larger than this many bytes are discarded and flagged ``HTTPRequest/isBodyTooLarge``.
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

        /// Creates a configuration.
        public init(address: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = 2,
                    maximumBodySize: Int = 16 << 20, connectionTimeout: Int = 60, maximumConnections: Int = 4096) {
            self.address = address
            self.port = port
            self.threads = threads
            self.maximumBodySize = maximumBodySize
            self.connectionTimeout = connectionTimeout
            self.maximumConnections = maximumConnections
        }
    }
}
