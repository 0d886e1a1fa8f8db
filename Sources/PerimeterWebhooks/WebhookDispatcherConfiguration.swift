import Foundation

extension WebhookDispatcher {
    /// How the dispatcher delivers.
    public struct Configuration: Sendable {
        /// Retry schedule and retry window (default: 1 s doubling up to 10 min, for 24 h).
        public var retryPolicy: WebhookRetryPolicy
        /// Whether loopback/private/link-local targets are allowed (SSRF guard; default `false`).
        public var allowPrivateTargets: Bool
        /// Connect timeout per attempt (TCP and TLS handshake), in seconds (default 5).
        public var connectTimeout: TimeInterval
        /// Timeout of a whole attempt (connect, send, status line and headers), in seconds (default 10).
        public var responseTimeout: TimeInterval
        /// Extra trusted CAs and the client certificate for `https` receivers (default: the system's
        /// CAs, no client certificate).
        public var tls: WebhookTLS
        /// The CloudEvents `source` attribute (default `/perimeter`).
        public var source: String
        /// How often an idle worker re-reads the event log even without a wake-up, in seconds (default 1).
        public var idlePollInterval: TimeInterval
        /// How many log events a worker reads at once (default 256).
        public var batchSize: Int
        /// Seed of the jitter generator; `nil` seeds from the system generator. Set it in tests.
        public var jitterSeed: UInt64?
        /// Whether the event in a body carries its fence's `properties` (default `true`).
        public var eventProperties: Bool

        /// Creates a configuration.
        public init(retryPolicy: WebhookRetryPolicy = WebhookRetryPolicy(), allowPrivateTargets: Bool = false,
                    connectTimeout: TimeInterval = 5, responseTimeout: TimeInterval = 10, source: String = "/perimeter",
                    idlePollInterval: TimeInterval = 1, batchSize: Int = 256, jitterSeed: UInt64? = nil,
                    eventProperties: Bool = true, tls: WebhookTLS = WebhookTLS()) {
            self.retryPolicy = retryPolicy
            self.allowPrivateTargets = allowPrivateTargets
            self.connectTimeout = connectTimeout
            self.responseTimeout = responseTimeout
            self.source = source
            self.idlePollInterval = idlePollInterval
            self.batchSize = batchSize
            self.jitterSeed = jitterSeed
            self.eventProperties = eventProperties
            self.tls = tls
        }

        /// Why the configuration is unusable, or `nil`.
        public func validate() -> WebhookError? {
            if let problem = retryPolicy.validate() { return problem }
            guard connectTimeout.isFinite, connectTimeout > 0, responseTimeout.isFinite, responseTimeout > 0,
                  idlePollInterval.isFinite, idlePollInterval > 0, batchSize > 0 else {
                return WebhookError(.invalidArgument,
                                    "webhook timeouts and the idle poll interval must be finite and positive, and the batch size positive")
            }
            return nil
        }
    }
}

/// SplitMix64: the jitter generator (small, seedable, good enough for spreading retries).
struct JitterGenerator: RandomNumberGenerator, Sendable {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
