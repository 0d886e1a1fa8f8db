/// One HTTP request as the transport received it: everything a handler needs, no C types.
public struct HTTPRequest: Sendable {
    /// The method, as sent (`GET`, `POST` …).
    public var method: String
    /// The path without the query string, as the client sent it: still percent-encoded
    /// (`/v1/fences/depots%2Fnorth`), so a router splits it on `/` before decoding each segment.
    public var path: String
    /// The query arguments, decoded; a repeated name keeps its last value, `?flag` has the value `""`.
    public var query: [String: String]
    /// The headers, names lower-cased; a repeated header keeps its values joined with `", "`.
    public var headers: [String: String]
    /// The body bytes (empty when ``isBodyTooLarge``).
    public var body: [UInt8]
    /// The client's address (`127.0.0.1`, `::1`), empty when unknown.
    public var remoteAddress: String
    /// Whether the body exceeded the server's ``HTTPServer/Configuration/maximumBodySize``; the body
    /// was then read and discarded, and the handler should answer 413.
    public var isBodyTooLarge: Bool

    /// Creates a request (the transport does this; tests call handlers with hand-made ones).
    public init(method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:],
                body: [UInt8] = [], remoteAddress: String = "", isBodyTooLarge: Bool = false) {
        self.method = method
        self.path = path
        self.query = query
        var lowered: [String: String] = [:]
        for (name, value) in headers { lowered[name.lowercased()] = value }
        self.headers = lowered
        self.body = body
        self.remoteAddress = remoteAddress
        self.isBodyTooLarge = isBodyTooLarge
    }

    /// Creates a request whose header names are already lower-cased (the transport's path: it lower-cases
    /// while copying them, so the dictionary is not built twice).
    init(method: String, path: String, query: [String: String], lowercasedHeaders: [String: String], body: [UInt8],
         remoteAddress: String, isBodyTooLarge: Bool) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = lowercasedHeaders
        self.body = body
        self.remoteAddress = remoteAddress
        self.isBodyTooLarge = isBodyTooLarge
    }

    /// The value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
