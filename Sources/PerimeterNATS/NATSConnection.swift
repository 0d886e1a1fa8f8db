internal import CNATS
import Foundation

/// One client connection to a NATS cluster, given as a list of server URLs; the client reconnects to
/// any of them when the one it uses goes away.
///
/// Thread-safe (libnats locks internally): JetStream contexts, key-value buckets and consumers made from
/// it may be used from any thread. Closed by ``close()`` or when the last reference goes.
public final class NATSConnection: @unchecked Sendable {
    /// How to connect.
    public struct Options: Sendable {
        /// The servers, e.g. `["nats://127.0.0.1:4222", "nats://127.0.0.1:4223"]`; the client picks among
        /// them at random (as libnats does by default), and reconnects to another when one fails.
        public var urls: [String]
        /// The name the servers show for this client (monitoring), e.g. `perimeter-worker-1`.
        public var name: String?
        /// How long one connection attempt to one server may take.
        public var connectTimeout: Duration
        /// How long to wait before trying a server again after losing the connection.
        public var reconnectWait: Duration
        /// How many times to try each server after the connection is lost; `nil`: for ever.
        public var maxReconnects: Int?

        /// Options for `urls` with the defaults: 2 s connect timeout, 250 ms reconnect wait, reconnect for ever.
        public init(urls: [String], name: String? = nil, connectTimeout: Duration = .seconds(2),
                    reconnectWait: Duration = .milliseconds(250), maxReconnects: Int? = nil) {
            self.urls = urls
            self.name = name
            self.connectTimeout = connectTimeout
            self.reconnectWait = reconnectWait
            self.maxReconnects = maxReconnects
        }
    }

    let handle: OpaquePointer
    private let lock = NSLock()
    private var closed = false

    /// Connects to one of `options.urls`.
    /// - Throws: ``NATSError`` when the list is empty or malformed, the client library does not match
    ///   the headers, or no server answers.
    public init(_ options: Options) throws(NATSError) {
        guard !options.urls.isEmpty else {
            throw NATSError(operation: "connect", status: Int32(bitPattern: NATS_INVALID_ARG.rawValue),
                            statusText: "Invalid Argument", jetStreamCode: 0, text: "no server URL given")
        }
        guard NATSConnection.compatible else {
            throw NATSError(operation: "connect", status: Int32(bitPattern: NATS_ERR.rawValue), statusText: "Error",
                            jetStreamCode: 0, text: "the libnats library does not match the headers Perimeter was built with")
        }
        var opts: OpaquePointer?
        try NATSError.check(natsOptions_Create(&opts), "connect: create options")
        defer { natsOptions_Destroy(opts) }
        let joined = options.urls.joined(separator: ", ")
        try withCStrings(options.urls) { (pointers, count) throws(NATSError) in
            try NATSError.check(natsOptions_SetServers(opts, pointers, Int32(count)), "connect: servers \(joined)")
        }
        if let name = options.name { try NATSError.check(natsOptions_SetName(opts, name), "connect: name") }
        try NATSError.check(natsOptions_SetTimeout(opts, options.connectTimeout.milliseconds), "connect: timeout")
        try NATSError.check(natsOptions_SetReconnectWait(opts, options.reconnectWait.milliseconds), "connect: reconnect wait")
        try NATSError.check(natsOptions_SetMaxReconnect(opts, Int32(clamping: options.maxReconnects ?? -1)), "connect: reconnects")
        var connection: OpaquePointer?
        try NATSError.check(natsConnection_Connect(&connection, opts), "connect to \(joined)")
        guard let connection else {
            throw NATSError(operation: "connect to \(joined)", status: Int32(bitPattern: NATS_ERR.rawValue),
                            statusText: "Error", jetStreamCode: 0, text: "the client returned no connection")
        }
        handle = connection
    }

    /// Connects to one of `urls` with the default options.
    public convenience init(urls: [String], name: String? = nil) throws(NATSError) {
        try self.init(Options(urls: urls, name: name))
    }

    deinit {
        close()
        natsConnection_Destroy(handle)
    }

    /// Whether the connection is up now (not closed, not reconnecting).
    public var isConnected: Bool { natsConnection_Status(handle) == NATS_CONN_STATUS_CONNECTED }

    /// The URL of the server the connection uses now, or `nil` while it is not connected.
    public var connectedURL: String? {
        var buffer = [CChar](repeating: 0, count: 512)
        guard natsConnection_GetConnectedUrl(handle, &buffer, buffer.count) == NATS_OK, buffer[0] != 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Sends everything buffered and waits (at most `timeout`) for the server to confirm it.
    public func flush(timeout: Duration = .seconds(5)) throws(NATSError) {
        try NATSError.check(natsConnection_FlushTimeout(handle, timeout.milliseconds), "flush")
    }

    /// Closes the connection; pending calls fail with ``NATSError/Reason/unreachable``. Idempotent.
    public func close() {
        let first = lock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        if first { natsConnection_Close(handle) }
    }

    /// Whether the client library linked at run time matches the headers (checked once).
    private static let compatible: Bool = perimeter_nats_check_compatibility()
}

extension Duration {
    /// Whole milliseconds (rounded down; at least 1 for a positive duration), as libnats takes timeouts.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let value = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return value == 0 && attoseconds > 0 ? 1 : value
    }

    /// Whole nanoseconds, as JetStream configurations take durations (a key-value bucket's TTL, a
    /// stream's duplicate window).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// Calls `body` with a C array of the C strings of `strings` (valid only during the call).
func withCStrings<R, E: Error>(_ strings: [String], _ body: (UnsafeMutablePointer<UnsafePointer<CChar>?>, Int) throws(E) -> R) throws(E) -> R {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var pointers = copies.map { UnsafePointer<CChar>($0) }
    let count = pointers.count
    return try pointers.withUnsafeMutableBufferPointer { (buffer) throws(E) -> R in try body(buffer.baseAddress!, count) }
}
