/// The series coefficients of Karney (2013), eqs. (17), (18), (21), (24), (42), (43) and (25),
/// truncated at order 6.
extension Geodesic {
    /// A₁ − 1, where A₁ = (1 + ε²/4 + ε⁴/64 + ε⁶/256)/(1 − ε).
    static func a1m1(_ eps: Double) -> Double {
        let e2 = eps * eps
        let t = e2 * (0.25 + e2 * (1.0 / 64 + e2 / 256))
        return (t + eps) / (1 - eps)
    }

    /// C₁ₗ, l = 1…6: distance I₁(σ) = A₁(σ + Σ C₁ₗ sin 2lσ).
    static func c1(_ eps: Double) -> Series6 {
        let e2 = eps * eps
        var d = eps
        var s = Series6(c1: 0, c2: 0, c3: 0, c4: 0, c5: 0, c6: 0)
        s.c1 = d * (-0.5 + e2 * (3.0 / 16 - e2 / 32)); d *= eps
        s.c2 = d * (-1.0 / 16 + e2 * (1.0 / 32 - e2 * 9.0 / 2048)); d *= eps
        s.c3 = d * (-1.0 / 48 + e2 * 3.0 / 256); d *= eps
        s.c4 = d * (-5.0 / 512 + e2 * 3.0 / 512); d *= eps
        s.c5 = d * (-7.0 / 1280); d *= eps
        s.c6 = d * (-7.0 / 2048)
        return s
    }

    /// C′₁ₗ, l = 1…6: the reverted series σ = τ + Σ C′₁ₗ sin 2lτ.
    static func c1p(_ eps: Double) -> Series6 {
        let e2 = eps * eps
        var d = eps
        var s = Series6(c1: 0, c2: 0, c3: 0, c4: 0, c5: 0, c6: 0)
        s.c1 = d * (0.5 + e2 * (-9.0 / 32 + e2 * 205.0 / 1536)); d *= eps
        s.c2 = d * (5.0 / 16 + e2 * (-37.0 / 96 + e2 * 1335.0 / 4096)); d *= eps
        s.c3 = d * (29.0 / 96 - e2 * 75.0 / 128); d *= eps
        s.c4 = d * (539.0 / 1536 - e2 * 2391.0 / 2560); d *= eps
        s.c5 = d * (3467.0 / 7680); d *= eps
        s.c6 = d * (38081.0 / 61440)
        return s
    }

    /// A₂ − 1, where A₂ = (1 − ε)(1 + ε²/4 + 9ε⁴/64 + 25ε⁶/256).
    static func a2m1(_ eps: Double) -> Double {
        let e2 = eps * eps
        let t = e2 * (0.25 + e2 * (9.0 / 64 + e2 * 25.0 / 256))
        return t * (1 - eps) - eps
    }

    /// C₂ₗ, l = 1…6: I₂(σ) = A₂(σ + Σ C₂ₗ sin 2lσ), used for the reduced length.
    static func c2(_ eps: Double) -> Series6 {
        let e2 = eps * eps
        var d = eps
        var s = Series6(c1: 0, c2: 0, c3: 0, c4: 0, c5: 0, c6: 0)
        s.c1 = d * (0.5 + e2 * (1.0 / 16 + e2 / 32)); d *= eps
        s.c2 = d * (3.0 / 16 + e2 * (1.0 / 32 + e2 * 35.0 / 2048)); d *= eps
        s.c3 = d * (5.0 / 48 + e2 * 5.0 / 256); d *= eps
        s.c4 = d * (35.0 / 512 + e2 * 7.0 / 512); d *= eps
        s.c5 = d * (63.0 / 1280); d *= eps
        s.c6 = d * (77.0 / 2048)
        return s
    }

    /// A₃(ε) for this ellipsoid.
    func a3f(_ eps: Double) -> Double {
        1 + eps * (a3.0 + eps * (a3.1 + eps * (a3.2 + eps * (a3.3 + eps * a3.4))))
    }

    /// C₃ₗ(ε), l = 1…5, for this ellipsoid (c6 is zero).
    func c3f(_ eps: Double) -> Series6 {
        let t = c3
        let e2 = eps * eps, e3 = e2 * eps, e4 = e3 * eps, e5 = e4 * eps
        return Series6(
            c1: eps * t.c11 + e2 * t.c12 + e3 * t.c13 + e4 * t.c14 + e5 * t.c15,
            c2: e2 * t.c22 + e3 * t.c23 + e4 * t.c24 + e5 * t.c25,
            c3: e3 * t.c33 + e4 * t.c34 + e5 * t.c35,
            c4: e4 * t.c44 + e5 * t.c45,
            c5: e5 * t.c55,
            c6: 0)
    }
}

/// The n-dependent coefficients of C₃ₗ(ε): cₗₖ multiplies εᵏ in C₃ₗ.
struct C3Table: Sendable {
    let c11, c12, c13, c14, c15: Double
    let c22, c23, c24, c25: Double
    let c33, c34, c35: Double
    let c44, c45: Double
    let c55: Double

    init(n: Double) {
        let n2 = n * n
        c11 = 0.25 - 0.25 * n
        c12 = 0.125 - 0.125 * n2
        c13 = 3.0 / 64 + 3.0 / 64 * n - n2 / 64
        c14 = 5.0 / 128 + n / 64
        c15 = 3.0 / 128
        c22 = 1.0 / 16 - 3.0 / 32 * n + n2 / 32
        c23 = 3.0 / 64 - n / 32 - 3.0 / 64 * n2
        c24 = 3.0 / 128 + n / 128
        c25 = 5.0 / 256
        c33 = 5.0 / 192 - 3.0 / 64 * n + 5.0 / 192 * n2
        c34 = 3.0 / 128 - 5.0 / 192 * n
        c35 = 7.0 / 512
        c44 = 7.0 / 512 - 7.0 / 256 * n
        c45 = 7.0 / 512
        c55 = 21.0 / 2560
    }
}
