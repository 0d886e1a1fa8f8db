/// What a handler answers: a status, headers, and a body that is either bytes or a live stream.
public struct HTTPResponse: Sendable {
    /// A response body.
    public enum Body: Sendable {
        /// A complete body, sent with a `Content-Length`.
        case bytes([UInt8])
        /// A body written over time (Server-Sent Events), sent chunked until the stream finishes.
        case stream(HTTPStream)
    }

    /// The status code.
    public var status: Int
    /// The headers, in order; `Content-Length` and `Transfer-Encoding` are set by the transport.
    public var headers: [(name: String, value: String)]
    /// The body.
    public var body: Body

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)] = [], body: Body = .bytes([])) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with `bytes` as body and `contentType` as its `Content-Type`.
    public init(status: Int, contentType: String, bytes: [UInt8], headers: [(name: String, value: String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: .bytes(bytes))
    }

    /// The value of header `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        let lowered = name.lowercased()
        return headers.first { $0.name.lowercased() == lowered }?.value
    }

    /// The body bytes (empty for a stream).
    public var bodyBytes: [UInt8] {
        if case .bytes(let bytes) = body { return bytes }
        return []
    }
}
