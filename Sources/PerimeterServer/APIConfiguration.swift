/// The API's limits and security settings.
public struct APIConfiguration: Sendable {
    /// Accepted bearer tokens; empty means no authentication (allowed on loopback addresses only).
    public var tokens: [AccessToken]
    /// Largest request body, in bytes (413 beyond). The default, 64 MiB, takes a FeatureCollection of
    /// 10,000 detailed fences in one `POST /v1/fences` (gen_workload.py's 1.5 million vertices are 36 MB).
    public var maximumBodySize: Int
    /// Most location updates per `POST /v1/locations` (413 beyond).
    public var maximumBatchSize: Int
    /// Requests per second allowed per token (or per client address without tokens); `nil`: unlimited.
    public var rateLimit: Double?
    /// Burst size of the rate limit's token bucket.
    public var rateBurst: Double
    /// Seconds between SSE heartbeat comments.
    public var heartbeatInterval: Double
    /// Whether events carry their fence's `properties` unless a request says otherwise (query parameter
    /// `properties`); webhook bodies follow it too. `perimeter serve --no-event-properties` turns it off.
    public var eventProperties: Bool

    /// Creates a configuration.
    public init(tokens: [AccessToken] = [], maximumBodySize: Int = 64 << 20, maximumBatchSize: Int = 10_000,
                rateLimit: Double? = nil, rateBurst: Double = 100, heartbeatInterval: Double = 15,
                eventProperties: Bool = true) {
        self.tokens = tokens
        self.maximumBodySize = maximumBodySize
        self.maximumBatchSize = maximumBatchSize
        self.rateLimit = rateLimit
        self.rateBurst = rateBurst
        self.heartbeatInterval = heartbeatInterval
        self.eventProperties = eventProperties
    }
}
