import Foundation

/// When failed deliveries are retried: exponential backoff with full jitter, for a retry window.
///
/// The delay before attempt *n + 1* (after *n* failures) is uniform in
/// `[0, min(maximumDelay, initialDelay × multiplier^(n−1))]` ("full jitter"). When the next attempt
/// would start later than `retention` after the first attempt, the event is dead-lettered instead.
public struct WebhookRetryPolicy: Hashable, Sendable {
    /// The backoff cap after the first failure, in seconds (default 1 s).
    public var initialDelay: TimeInterval
    /// The largest backoff cap, in seconds (default 10 min).
    public var maximumDelay: TimeInterval
    /// Growth of the cap per failure (default 2).
    public var multiplier: Double
    /// How long an event is retried, counted from its first attempt (default 24 h).
    public var retention: TimeInterval

    /// Creates a policy.
    public init(initialDelay: TimeInterval = 1, maximumDelay: TimeInterval = 600, multiplier: Double = 2,
                retention: TimeInterval = 86_400) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.retention = retention
    }

    /// Why the policy is unusable, or `nil`.
    public func validate() -> WebhookError? {
        guard initialDelay.isFinite, initialDelay >= 0, maximumDelay.isFinite, maximumDelay >= initialDelay,
              multiplier.isFinite, multiplier >= 1, retention.isFinite, retention >= 0 else {
            return WebhookError(.invalidArgument,
                                "retry policy needs 0 ≤ initialDelay ≤ maximumDelay, multiplier ≥ 1 and retention ≥ 0, all finite (got \(initialDelay), \(maximumDelay), \(multiplier), \(retention))")
        }
        return nil
    }

    /// The backoff cap after `failures` failures (≥ 1).
    public func cap(afterFailures failures: Int) -> TimeInterval {
        let exponent = Double(max(0, failures - 1))
        return min(maximumDelay, initialDelay * pow(multiplier, min(exponent, 1000)))
    }

    /// The jittered delay after `failures` failures, drawn from `generator`.
    public func delay(afterFailures failures: Int, using generator: inout some RandomNumberGenerator) -> TimeInterval {
        let cap = cap(afterFailures: failures)
        guard cap > 0 else { return 0 }
        return Double.random(in: 0...cap, using: &generator)
    }
}
