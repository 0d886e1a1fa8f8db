import Foundation

/// A small, fast, seedable random number generator (SplitMix64), so every workload is the same on
/// every machine and every run.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator from a seed.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SplitMix64.mix(state)
    }

    /// The SplitMix64 finaliser: a bijective 64-bit mix, also used to hash (update, fence) pairs.
    @inlinable
    public static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform double in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        Double.random(in: range, using: &self)
    }

    /// A uniform integer in `range`.
    public mutating func integer(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// A normally distributed double (Box–Muller).
    public mutating func normal(mean: Double = 0, deviation: Double = 1) -> Double {
        let u1 = Double.random(in: Double.ulpOfOne...1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return mean + deviation * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }

    /// An index drawn with the given (normalised) cumulative weights.
    public mutating func pick(cumulative: [Double]) -> Int {
        let u = Double.random(in: 0..<1, using: &self)
        var lo = 0, hi = cumulative.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if cumulative[mid] > u { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }
}
