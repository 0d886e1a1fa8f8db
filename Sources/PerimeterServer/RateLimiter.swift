import Foundation
import Synchronization

/// A token bucket per client key: `rate` requests per second on average, bursts up to `burst`.
public final class RateLimiter: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: Double
    }

    /// Requests per second refilled.
    public let rate: Double
    /// Bucket capacity.
    public let burst: Double
    let buckets = Mutex<[String: Bucket]>([:])
    let clock: @Sendable () -> Double

    /// Creates a limiter; `clock` returns seconds (monotonic; tests pass their own).
    public init(rate: Double, burst: Double,
                clock: @escaping @Sendable () -> Double = { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }) {
        self.rate = max(rate, 1e-9)
        self.burst = max(burst, 1)
        self.clock = clock
    }

    /// Takes one token for `key`.
    /// - Returns: `nil` when allowed, else the seconds to wait before a token is available.
    /// - Complexity: O(1) amortised.
    public func acquire(_ key: String) -> Double? {
        let now = clock()
        return buckets.withLock { buckets -> Double? in
            var bucket = buckets[key] ?? Bucket(tokens: burst, updated: now)
            bucket.tokens = min(burst, bucket.tokens + max(0, now - bucket.updated) * rate)
            bucket.updated = now
            defer { buckets[key] = bucket }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                return nil
            }
            return (1 - bucket.tokens) / rate
        }
    }
}
