/// Exact predicates in the longitude/latitude plane (x = longitude, y = latitude).
///
/// Both predicates give the mathematically exact answer for every finite `Double` input: a
/// floating-point filter with a proven error bound settles almost every call, an error-free
/// expansion (products split with FMA, summed without rounding) settles the near-degenerate rest,
/// and an arbitrary-precision integer sum covers inputs so extreme that the expansion could overflow
/// or underflow (never reached with longitude/latitude values).
public enum Planar {
    /// The sign of the turn a → b → c: `+1` counter-clockwise (c left of a→b), `-1` clockwise, `0` collinear.
    ///
    /// Exact for all finite inputs (see the type's documentation).
    /// - Complexity: O(1); allocation-free unless a coordinate's magnitude is outside 2⁻⁴⁰⁰…2⁴⁰⁰.
    @inlinable
    public static func orientation(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate) -> Int {
        let det = certainDeterminant(a, b, c)
        if det > 0 { return 1 }
        if det < 0 { return -1 }
        return exactOrientation(a, b, c)
    }

    /// The floating-point determinant of the turn a → b → c when its sign is provably that of the exact
    /// orientation, else 0: the filter of ``orientation(_:_:_:)`` without its exact fallback, for loops
    /// that settle the rare undecided case (or NaN input, which also yields 0) elsewhere.
    /// - Complexity: O(1), no calls.
    @inlinable
    public static func certainDeterminant(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate) -> Double {
        let detLeft = (a.longitude - c.longitude) * (b.latitude - c.latitude)
        let detRight = (a.latitude - c.latitude) * (b.longitude - c.longitude)
        let det = detLeft - detRight
        let detSum = Swift.abs(detLeft) + Swift.abs(detRight)
        // Shewchuk's bound (3 + 16ε)ε·detSum, plus a tiny absolute term covering products that
        // underflow; valid while nothing overflows (detSum finite and far below the maximum).
        let bound = 3.3306690738754716e-16 * detSum + 0x1p-1060
        return detSum < 0x1p1000 && Swift.abs(det) > bound ? det : 0
    }

    /// Whether `p` lies on the closed segment a–b (endpoints included), exactly.
    ///
    /// A degenerate segment (a == b) holds only that point.
    /// - Complexity: O(1).
    @inlinable
    public static func isOnSegment(_ p: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Bool {
        guard p.longitude >= Swift.min(a.longitude, b.longitude), p.longitude <= Swift.max(a.longitude, b.longitude),
              p.latitude >= Swift.min(a.latitude, b.latitude), p.latitude <= Swift.max(a.latitude, b.latitude)
        else { return false }
        return orientation(a, b, p) == 0
    }

    /// The exact sign of det = bx·cy − bx·ay − ax·cy − by·cx + ax·by + ay·cx, for when the filter
    /// cannot decide.
    @usableFromInline
    static func exactOrientation(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate) -> Int {
        let values = (a.longitude, a.latitude, b.longitude, b.latitude, c.longitude, c.latitude)
        guard isExpansionSafe(values.0), isExpansionSafe(values.1), isExpansionSafe(values.2),
              isExpansionSafe(values.3), isExpansionSafe(values.4), isExpansionSafe(values.5)
        else { return BigOrientation.sign(a, b, c) }
        let (ax, ay, bx, by, cx, cy) = values
        // Twelve doubles whose exact sum is the determinant.
        var e = ExactSum()
        e.addProduct(bx, cy)
        e.addProduct(-bx, ay)
        e.addProduct(-ax, cy)
        e.addProduct(-by, cx)
        e.addProduct(ax, by)
        e.addProduct(ay, cx)
        return e.sign
    }

    /// Whether `x` is zero or of a magnitude for which FMA-split products and their sums are exact.
    @inlinable
    static func isExpansionSafe(_ x: Double) -> Bool {
        let m = Swift.abs(x)
        return m == 0 || (m >= 0x1p-400 && m <= 0x1p400)
    }
}

/// An exact sum of up to twelve doubles kept as a nonoverlapping expansion (Shewchuk's
/// grow-expansion), stored inline so that the exact path does not allocate.
@usableFromInline
struct ExactSum {
    @usableFromInline var terms: (Double, Double, Double, Double, Double, Double,
                                  Double, Double, Double, Double, Double, Double, Double)
        = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    @usableFromInline var count = 0

    @usableFromInline init() {}

    /// Adds the exact product x·y (as the two-term expansion hi + lo).
    @usableFromInline
    mutating func addProduct(_ x: Double, _ y: Double) {
        let hi = x * y
        // x·y − hi with a single rounding (FMA), which is exact for these magnitudes.
        let lo = (-hi).addingProduct(x, y)
        add(lo)
        add(hi)
    }

    /// Adds one double exactly (grow-expansion with two-sum; zero components are dropped).
    @usableFromInline
    mutating func add(_ value: Double) {
        var q = value
        let oldCount = count
        var n = 0
        withUnsafeMutableBytes(of: &terms) { raw in
            let t = raw.bindMemory(to: Double.self)
            for i in 0..<oldCount {
                let s = q + t[i]
                let bv = s - q
                let av = s - bv
                let err = (q - av) + (t[i] - bv)
                q = s
                if err != 0 { t[n] = err; n += 1 }
            }
            if q != 0 { t[n] = q; n += 1 }
        }
        count = n
    }

    /// The sign of the sum: that of its largest (last) component.
    @usableFromInline
    var sign: Int {
        guard count > 0 else { return 0 }
        var copy = terms
        let index = count - 1
        let last = withUnsafeBytes(of: &copy) { $0.bindMemory(to: Double.self)[index] }
        return last > 0 ? 1 : -1
    }
}

/// Arbitrary-precision fallback for the orientation determinant, used only when a coordinate's
/// magnitude is so extreme (outside 2⁻⁴⁰⁰…2⁴⁰⁰) that FMA products could overflow or underflow.
enum BigOrientation {
    /// The exact sign of the orientation determinant of a, b, c.
    static func sign(_ a: Coordinate, _ b: Coordinate, _ c: Coordinate) -> Int {
        let ax = a.longitude, ay = a.latitude, bx = b.longitude, by = b.latitude
        let cx = c.longitude, cy = c.latitude
        let products: [(Double, Double, Bool)] = [
            (bx, cy, false), (bx, ay, true), (ax, cy, true), (by, cx, true), (ax, by, false), (ay, cx, false),
        ]
        // Each product is ±m·2^e with m < 2¹⁰⁶; align all at the smallest exponent.
        var terms: [(negative: Bool, high: UInt64, low: UInt64, exponent: Int)] = []
        for (x, y, negated) in products {
            let (mx, ex, nx) = decompose(x), (my, ey, ny) = decompose(y)
            if mx == 0 || my == 0 { continue }
            let (high, low) = mx.multipliedFullWidth(by: my)
            terms.append((nx != ny ? !negated : negated, high, low, ex + ey))
        }
        guard let minExponent = terms.map(\.exponent).min() else { return 0 }
        let maxShift = terms.map { $0.exponent - minExponent }.max() ?? 0
        let limbCount = maxShift / 64 + 4
        var positive = [UInt64](repeating: 0, count: limbCount)
        var negative = [UInt64](repeating: 0, count: limbCount)
        for t in terms {
            let shift = t.exponent - minExponent
            if t.negative {
                addShifted(&negative, t.high, t.low, shift)
            } else {
                addShifted(&positive, t.high, t.low, shift)
            }
        }
        for i in stride(from: limbCount - 1, through: 0, by: -1) where positive[i] != negative[i] {
            return positive[i] > negative[i] ? 1 : -1
        }
        return 0
    }

    /// x = ±m·2^e exactly, m an integer below 2⁵³.
    static func decompose(_ x: Double) -> (UInt64, Int, Bool) {
        let bits = x.bitPattern
        let exponentField = Int((bits >> 52) & 0x7ff)
        let fraction = bits & ((1 << 52) - 1)
        let negative = (bits >> 63) != 0
        if exponentField == 0 { return (fraction, -1074, negative) }
        return (fraction | (1 << 52), exponentField - 1075, negative)
    }

    /// acc += (high·2⁶⁴ + low)·2^shift.
    static func addShifted(_ acc: inout [UInt64], _ high: UInt64, _ low: UInt64, _ shift: Int) {
        let limb = shift / 64, bit = UInt64(shift % 64)
        // The 128-bit value shifted left by `bit` spans three limbs.
        let w0 = low << bit
        let w1 = bit == 0 ? high : (high << bit) | (low >> (64 - bit))
        let w2 = bit == 0 ? 0 : high >> (64 - bit)
        var carry: UInt64 = 0
        var i = limb
        for w in [w0, w1, w2] {
            let (s1, o1) = acc[i].addingReportingOverflow(w)
            let (s2, o2) = s1.addingReportingOverflow(carry)
            acc[i] = s2
            carry = (o1 ? 1 : 0) + (o2 ? 1 : 0)
            i += 1
        }
        while carry != 0 && i < acc.count {
            let (s, o) = acc[i].addingReportingOverflow(carry)
            acc[i] = s
            carry = o ? 1 : 0
            i += 1
        }
    }
}
