import Foundation

/// Request latencies in a fixed log-scale histogram: nanoseconds, exact below 64 ns, then 32 buckets per
/// power of two (each bucket within ≈ 3 % of its values). Recording is an index computation and an
/// increment, so a load generator can record every request without allocating.
public struct LatencyHistogram: Sendable, Equatable {
    /// Sub-buckets per power of two, as a power of two.
    static let subBits = 5
    /// Buckets: 64 exact ones, then 32 for each power of two from 2⁶ to 2⁶³.
    static let bucketCount = (64 - subBits + 1) * (1 << subBits)

    /// Requests per bucket.
    private(set) var counts: [UInt32]
    /// Values recorded.
    public private(set) var count = 0
    /// The largest value recorded, in nanoseconds.
    public private(set) var maxNanoseconds: UInt64 = 0

    /// An empty histogram (its one allocation).
    public init() { counts = Array(repeating: 0, count: Self.bucketCount) }

    /// The bucket of `nanoseconds`.
    /// - Complexity: O(1).
    static func bucket(_ nanoseconds: UInt64) -> Int {
        let sub = UInt64(1) << subBits
        if nanoseconds < 2 * sub { return Int(nanoseconds) }
        let exponent = 63 - nanoseconds.leadingZeroBitCount  // ≥ 6
        let mantissa = nanoseconds >> UInt64(exponent - subBits)  // 32…63
        return (exponent - subBits) * Int(sub) + Int(mantissa)
    }

    /// The smallest value of bucket `index`, in nanoseconds.
    static func lowerBound(_ index: Int) -> UInt64 {
        let sub = 1 << subBits
        if index < 2 * sub { return UInt64(index) }
        let exponent = index / sub + subBits - 1
        let mantissa = UInt64(index % sub + sub)
        return mantissa << UInt64(exponent - subBits)
    }

    /// Records one latency.
    /// - Complexity: O(1), no allocation.
    public mutating func record(nanoseconds: UInt64) {
        counts[Self.bucket(nanoseconds)] &+= 1
        count += 1
        if nanoseconds > maxNanoseconds { maxNanoseconds = nanoseconds }
    }

    /// Adds `other`'s latencies to these.
    public mutating func merge(_ other: LatencyHistogram) {
        for index in counts.indices { counts[index] &+= other.counts[index] }
        count += other.count
        maxNanoseconds = max(maxNanoseconds, other.maxNanoseconds)
    }

    /// The latency below which a fraction `quantile` (0…1) of the requests fell, in seconds: the middle of
    /// its bucket (the largest value for the last one); 0 when empty.
    /// - Complexity: O(buckets).
    public func seconds(atQuantile quantile: Double) -> Double {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((quantile * Double(count)).rounded(.up)))
        var seen = 0
        for index in counts.indices {
            seen += Int(counts[index])
            guard seen >= rank else { continue }
            let low = Self.lowerBound(index)
            let high = index + 1 < Self.bucketCount ? Self.lowerBound(index + 1) : low
            let middle = Double(low) + Double(high - low) / 2
            return min(middle, Double(maxNanoseconds)) * 1e-9
        }
        return Double(maxNanoseconds) * 1e-9
    }

    /// `p50 0.84 ms, p99 2.1 ms` (and the maximum) for a row's note.
    public var summary: String {
        guard count > 0 else { return "no latency recorded" }
        return "latency p50 \(Self.format(seconds(atQuantile: 0.5))), p99 \(Self.format(seconds(atQuantile: 0.99))), max \(Self.format(Double(maxNanoseconds) * 1e-9))"
    }

    /// Seconds as µs or ms with two or three significant digits.
    static func format(_ seconds: Double) -> String {
        let micro = seconds * 1e6
        if micro < 1_000 { return micro < 100 ? String(format: "%.1f µs", micro) : String(format: "%.0f µs", micro) }
        let milli = seconds * 1e3
        return milli < 100 ? String(format: "%.2f ms", milli) : String(format: "%.0f ms", milli)
    }
}
