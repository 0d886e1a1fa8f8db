import Foundation

/// Angle helpers shared by the geodesic code: degree-exact reductions and series evaluation.
@usableFromInline
enum GeoMath {
    /// π/180.
    @usableFromInline static let degree = Double.pi / 180
    /// A number whose square is still normal: stands in for zero where a division must not fail.
    static let tiny = Double.leastNormalMagnitude.squareRoot()

    /// Sine and cosine of an angle in degrees, reduced exactly to ±45° first so that multiples of
    /// 90° give exact zeros and ones.
    @usableFromInline
    static func sincosd(_ x: Double) -> (sin: Double, cos: Double) {
        var r = fmod(x, 360)
        let q = Int((r / 90).rounded())
        r -= 90 * Double(q)
        r *= degree
        let s = sin(r), c = cos(r)
        switch q & 3 {
        case 0: return (s, c)
        case 1: return (c, -s)
        case 2: return (-s, -c)
        default: return (-c, s)
        }
    }

    /// atan2 in degrees.
    static func atan2d(_ y: Double, _ x: Double) -> Double {
        atan2(y, x) / degree
    }

    /// `x` reduced to −180…180 (180 stays 180, −180 stays −180).
    static func angNormalize(_ x: Double) -> Double {
        let y = remainder(x, 360)
        return Swift.abs(y) == 180 ? (x < 0 ? -180 : 180) : y
    }

    /// `y − x` reduced to −180…180.
    static func angDiff(_ x: Double, _ y: Double) -> Double {
        // remainder() is exact, so reducing each first keeps the difference accurate.
        let d = remainder(remainder(y, 360) - remainder(x, 360), 360)
        if d == -180 { return (y - x) > 0 ? 180 : -180 }
        return d
    }

    /// Rounds angles within 1/16·2⁻⁵³ or so of zero towards zero, avoiding underflow in later steps.
    static func angRound(_ x: Double) -> Double {
        let z = 1.0 / 16
        var y = Swift.abs(x)
        y = y < z ? z - (z - y) : y
        return x < 0 ? -y : (x == 0 ? x : y)
    }

    /// Scales (s, c) to unit length.
    static func normalize(_ s: inout Double, _ c: inout Double) {
        let h = (s * s + c * c).squareRoot()
        s /= h
        c /= h
    }

    /// Σₖ cₖ·sin(2kx) for k = 1…6 by Clenshaw summation, given sin x and cos x.
    static func sinSeries(_ sinx: Double, _ cosx: Double, _ c: Series6) -> Double {
        let ar = 2 * (cosx - sinx) * (cosx + sinx)
        var y0 = c.c6, y1 = 0.0
        var y = ar * y0 - y1 + c.c5; y1 = y0; y0 = y
        y = ar * y0 - y1 + c.c4; y1 = y0; y0 = y
        y = ar * y0 - y1 + c.c3; y1 = y0; y0 = y
        y = ar * y0 - y1 + c.c2; y1 = y0; y0 = y
        y = ar * y0 - y1 + c.c1; y0 = y
        return 2 * sinx * cosx * y0
    }
}

/// Six Fourier coefficients c₁…c₆ of a series Σ cₖ sin(2kσ).
struct Series6 {
    var c1, c2, c3, c4, c5, c6: Double
}
