import Foundation

/// The inverse problem (Karney 2013, §§4–5): distance and azimuths between two points.
extension Geodesic {
    /// Raw solution: distance plus sine/cosine pairs of both azimuths.
    struct InverseSolution {
        var distance: Double
        var salp1: Double, calp1: Double, salp2: Double, calp2: Double
    }

    /// Distance and azimuths on the auxiliary sphere for the points a and b.
    ///
    /// The points are first put in a canonical order (|lat1| ≥ |lat2|, lat1 ≤ 0, 0 ≤ lon12 ≤ 180);
    /// meridional and equatorial geodesics are solved directly; otherwise α₁ is found by Newton's
    /// method on λ₁₂(α₁), started from a spherical or astroid (near-antipodal) estimate and kept in a
    /// shrinking bracket, with bisection as a fallback, which guarantees convergence.
    func solveInverse(_ p1: Coordinate, _ p2: Coordinate) -> InverseSolution {
        let tiny = GeoMath.tiny
        let tol0 = Double.ulpOfOne
        let f = flattening
        var lon12 = GeoMath.angDiff(p1.longitude, p2.longitude)
        var lonSign: Double = lon12.sign == .minus ? -1 : 1
        lon12 = GeoMath.angRound(Swift.abs(lon12))
        let lam12 = lon12 * GeoMath.degree
        let (slam12, clam12) = GeoMath.sincosd(lon12)

        var lat1 = GeoMath.angRound(Swift.max(-90, Swift.min(90, p1.latitude)))
        var lat2 = GeoMath.angRound(Swift.max(-90, Swift.min(90, p2.latitude)))
        let swapp: Double = Swift.abs(lat1) < Swift.abs(lat2) ? -1 : 1
        if swapp < 0 {
            lonSign = -lonSign
            swap(&lat1, &lat2)
        }
        let latSign: Double = lat1 < 0 ? 1 : -1
        lat1 *= latSign
        lat2 *= latSign

        var (sbet1, cbet1) = GeoMath.sincosd(lat1)
        sbet1 *= f1
        GeoMath.normalize(&sbet1, &cbet1)
        cbet1 = Swift.max(tiny, cbet1)
        var (sbet2, cbet2) = GeoMath.sincosd(lat2)
        sbet2 *= f1
        GeoMath.normalize(&sbet2, &cbet2)
        cbet2 = Swift.max(tiny, cbet2)
        // Make equal |β| exactly equal so the symmetric cases below are recognised.
        if cbet1 < -sbet1 {
            if cbet2 == cbet1 { sbet2 = sbet2 < 0 ? sbet1 : -sbet1 }
        } else if Swift.abs(sbet2) == -sbet1 {
            cbet2 = cbet1
        }
        let dn1 = (1 + ep2 * sbet1 * sbet1).squareRoot()
        let dn2 = (1 + ep2 * sbet2 * sbet2).squareRoot()

        var s12 = 0.0
        var salp1 = 0.0, calp1 = 0.0, salp2 = 0.0, calp2 = 0.0
        var meridian = lat1 == -90 || slam12 == 0
        if meridian {
            // Along a meridian: α₁ = λ₁₂ (0 or 180°), α₂ = 0.
            calp1 = clam12; salp1 = slam12; calp2 = 1; salp2 = 0
            let ssig1 = sbet1, csig1 = calp1 * cbet1
            let ssig2 = sbet2, csig2 = calp2 * cbet2
            let sig12 = atan2(Swift.max(0, csig1 * ssig2 - ssig1 * csig2), csig1 * csig2 + ssig1 * ssig2)
            let l = lengths(eps: n, sig12: sig12, ssig1: ssig1, csig1: csig1, dn1: dn1,
                            ssig2: ssig2, csig2: csig2, dn2: dn2)
            if sig12 < 1 || l.m12b >= 0 {
                s12 = Swift.max(0, l.s12b * b)
            } else {
                meridian = false // over a pole is not shortest: solve generally
            }
        }
        if !meridian && sbet1 == 0 && (f <= 0 || 180 - lon12 >= f * 180) {
            // Along the equator.
            calp1 = 0; calp2 = 0; salp1 = 1; salp2 = 1
            s12 = equatorialRadius * lam12
        } else if !meridian {
            let start = inverseStart(sbet1: sbet1, cbet1: cbet1, sbet2: sbet2, cbet2: cbet2,
                                     lam12: lam12, slam12: slam12, clam12: clam12)
            salp1 = start.salp1; calp1 = start.calp1
            if start.sig12 >= 0 {
                // Short line solved on the auxiliary sphere with a mean radius.
                salp2 = start.salp2; calp2 = start.calp2
                s12 = start.sig12 * b * start.dnm
            } else {
                let maxit1 = 20, maxit2 = maxit1 + 53 + 10
                let tolb = tol0 * tol0.squareRoot()
                var tripn = false, tripb = false
                var salp1a = tiny, calp1a = 1.0, salp1b = tiny, calp1b = -1.0
                var state = lambda12(sbet1: sbet1, cbet1: cbet1, dn1: dn1, sbet2: sbet2, cbet2: cbet2, dn2: dn2,
                                     salp1: salp1, calp1: calp1, slam120: slam12, clam120: clam12, derivative: true)
                var numit = 0
                while true {
                    let v = state.v
                    if tripb || !(Swift.abs(v) >= (tripn ? 8 : 1) * tol0) || numit == maxit2 { break }
                    if v > 0 && (numit > maxit1 || calp1 / salp1 > calp1b / salp1b) {
                        salp1b = salp1; calp1b = calp1
                    } else if v < 0 && (numit > maxit1 || calp1 / salp1 < calp1a / salp1a) {
                        salp1a = salp1; calp1a = calp1
                    }
                    var stepped = false
                    if numit < maxit1 && state.dv > 0 {
                        let dalp1 = -v / state.dv
                        if Swift.abs(dalp1) < Double.pi {
                            let sd = sin(dalp1), cd = cos(dalp1)
                            let nsalp1 = salp1 * cd + calp1 * sd
                            if nsalp1 > 0 {
                                calp1 = calp1 * cd - salp1 * sd
                                salp1 = nsalp1
                                GeoMath.normalize(&salp1, &calp1)
                                tripn = Swift.abs(v) <= 16 * tol0
                                stepped = true
                            }
                        }
                    }
                    if !stepped {
                        // Bisect the bracket [α₁a, α₁b].
                        salp1 = (salp1a + salp1b) / 2
                        calp1 = (calp1a + calp1b) / 2
                        GeoMath.normalize(&salp1, &calp1)
                        tripn = false
                        tripb = Swift.abs(salp1a - salp1) + (calp1a - calp1) < tolb
                            || Swift.abs(salp1 - salp1b) + (calp1 - calp1b) < tolb
                    }
                    numit += 1
                    state = lambda12(sbet1: sbet1, cbet1: cbet1, dn1: dn1, sbet2: sbet2, cbet2: cbet2, dn2: dn2,
                                     salp1: salp1, calp1: calp1, slam120: slam12, clam120: clam12,
                                     derivative: numit < maxit1)
                }
                salp2 = state.salp2; calp2 = state.calp2
                let l = lengths(eps: state.eps, sig12: state.sig12, ssig1: state.ssig1, csig1: state.csig1, dn1: dn1,
                                ssig2: state.ssig2, csig2: state.csig2, dn2: dn2)
                s12 = Swift.max(0, l.s12b * b)
            }
        }
        if swapp < 0 {
            swap(&salp1, &salp2)
            swap(&calp1, &calp2)
        }
        salp1 *= swapp * lonSign; calp1 *= swapp * latSign
        salp2 *= swapp * lonSign; calp2 *= swapp * latSign
        return InverseSolution(distance: s12, salp1: salp1, calp1: calp1, salp2: salp2, calp2: calp2)
    }

    /// Distance s₁₂/b and reduced length m₁₂/b along a geodesic with parameter ε between σ₁ and σ₂
    /// (Karney 2013, eqs. 38 and 40).
    func lengths(eps: Double, sig12: Double, ssig1: Double, csig1: Double, dn1: Double,
                 ssig2: Double, csig2: Double, dn2: Double) -> (s12b: Double, m12b: Double) {
        let c1 = Geodesic.c1(eps), c2 = Geodesic.c2(eps)
        let a1m1 = Geodesic.a1m1(eps), a2m1 = Geodesic.a2m1(eps)
        let b1 = GeoMath.sinSeries(ssig2, csig2, c1) - GeoMath.sinSeries(ssig1, csig1, c1)
        let b2 = GeoMath.sinSeries(ssig2, csig2, c2) - GeoMath.sinSeries(ssig1, csig1, c2)
        let s12b = (1 + a1m1) * (sig12 + b1)
        let j12 = (a1m1 - a2m1) * sig12 + ((1 + a1m1) * b1 - (1 + a2m1) * b2)
        let m12b = dn2 * (csig1 * ssig2) - dn1 * (ssig1 * csig2) - csig1 * csig2 * j12
        return (s12b, m12b)
    }

    /// The starting estimate of α₁ (Karney 2013, §5): a great-circle estimate with a mean radius for
    /// short lines (accepted outright when tiny), the astroid solution (eq. 55) for nearly antipodal
    /// points. `sig12 < 0` means "not solved yet".
    func inverseStart(sbet1: Double, cbet1: Double, sbet2: Double, cbet2: Double,
                      lam12: Double, slam12: Double, clam12: Double)
        -> (sig12: Double, salp1: Double, calp1: Double, salp2: Double, calp2: Double, dnm: Double) {
        let f = flattening
        let tol0 = Double.ulpOfOne
        let tol1 = 200 * tol0, tol2 = tol0.squareRoot(), xthresh = 1000 * tol2
        var sig12 = -1.0, salp2 = Double.nan, calp2 = Double.nan, dnm = Double.nan
        let sbet12 = sbet2 * cbet1 - cbet2 * sbet1
        let cbet12 = cbet2 * cbet1 + sbet2 * sbet1
        let sbet12a = sbet2 * cbet1 + cbet2 * sbet1
        let shortline = cbet12 >= 0 && sbet12 < 0.5 && cbet2 * lam12 < 0.5
        var somg12: Double, comg12: Double
        if shortline {
            var sbetm2 = (sbet1 + sbet2) * (sbet1 + sbet2)
            sbetm2 /= sbetm2 + (cbet1 + cbet2) * (cbet1 + cbet2)
            dnm = (1 + ep2 * sbetm2).squareRoot()
            let omg12 = lam12 / (f1 * dnm)
            somg12 = sin(omg12); comg12 = cos(omg12)
        } else {
            somg12 = slam12; comg12 = clam12
        }
        var salp1 = cbet2 * somg12
        var calp1 = comg12 >= 0
            ? sbet12 + cbet2 * sbet1 * somg12 * somg12 / (1 + comg12)
            : sbet12a - cbet2 * sbet1 * somg12 * somg12 / (1 - comg12)
        let ssig12 = (salp1 * salp1 + calp1 * calp1).squareRoot()
        let csig12 = sbet1 * sbet2 + cbet1 * cbet2 * comg12
        if shortline && ssig12 < etol2 {
            salp2 = cbet1 * somg12
            calp2 = sbet12 - cbet1 * sbet2 * (comg12 >= 0 ? somg12 * somg12 / (1 + comg12) : 1 - comg12)
            GeoMath.normalize(&salp2, &calp2)
            sig12 = atan2(ssig12, csig12)
        } else if Swift.abs(n) > 0.1 || csig12 >= 0 || ssig12 >= 6 * Swift.abs(n) * Double.pi * cbet1 * cbet1 || f < 0 {
            // The great-circle estimate is good enough to start Newton's method.
        } else {
            // Nearly antipodal (oblate ellipsoid): scale to the astroid problem.
            let lam12x = atan2(-slam12, -clam12)
            let k2 = sbet1 * sbet1 * ep2
            let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
            let lamscale = f * cbet1 * a3f(eps) * Double.pi
            let betscale = lamscale * cbet1
            let x = lam12x / lamscale
            let y = sbet12a / betscale
            if y > -tol1 && x > -1 - xthresh {
                salp1 = Swift.min(1, -x)
                calp1 = -(1 - salp1 * salp1).squareRoot()
            } else {
                let k = Geodesic.astroid(x, y)
                let omg12a = lamscale * (-x * k / (1 + k))
                somg12 = sin(omg12a); comg12 = -cos(omg12a)
                salp1 = cbet2 * somg12
                calp1 = sbet12a - cbet2 * sbet1 * somg12 * somg12 / (1 - comg12)
            }
        }
        if !(salp1 <= 0) {
            GeoMath.normalize(&salp1, &calp1)
        } else {
            salp1 = 1; calp1 = 0
        }
        return (sig12, salp1, calp1, salp2, calp2, dnm)
    }

    /// The positive root k of k⁴ + 2k³ − (x² + y² − 1)k² − 2y²k − y² = 0 (Karney 2013, eq. 55).
    static func astroid(_ x: Double, _ y: Double) -> Double {
        let p = x * x, q = y * y
        let r = (p + q - 1) / 6
        guard !(q == 0 && r <= 0) else { return 0 }
        let s = p * q / 4
        let r2 = r * r, r3 = r * r2
        let disc = s * (s + 2 * r3)
        var u = r
        if disc >= 0 {
            var t3 = s + r3
            t3 += t3 < 0 ? -disc.squareRoot() : disc.squareRoot()
            let t = cbrt(t3)
            u += t + (t != 0 ? r2 / t : 0)
        } else {
            let ang = atan2((-disc).squareRoot(), -(s + r3))
            u += 2 * r * cos(ang / 3)
        }
        let v = (u * u + q).squareRoot()
        let uv = u < 0 ? q / (v - u) : u + v
        let w = (uv - q) / (2 * v)
        return uv / ((uv + w * w).squareRoot() + w)
    }

    /// State of λ₁₂(α₁) − λ₁₂ for the Newton iteration, with its derivative.
    struct LambdaState {
        var v: Double, dv: Double
        var salp2: Double, calp2: Double, sig12: Double
        var ssig1: Double, csig1: Double, ssig2: Double, csig2: Double, eps: Double
    }

    /// λ₁₂ as a function of α₁, minus the target λ₁₂ (Karney 2013, eqs. 5–8, 23, and 46 for the
    /// derivative dλ₁₂/dα₁ = m₁₂/(b·cos α₂·cos β₂)·(1 − f)).
    func lambda12(sbet1: Double, cbet1: Double, dn1: Double, sbet2: Double, cbet2: Double, dn2: Double,
                  salp1: Double, calp1 calp1In: Double, slam120: Double, clam120: Double,
                  derivative: Bool) -> LambdaState {
        var calp1 = calp1In
        if sbet1 == 0 && calp1 == 0 { calp1 = -GeoMath.tiny }
        let salp0 = salp1 * cbet1
        let calp0 = (calp1 * calp1 + (salp1 * sbet1) * (salp1 * sbet1)).squareRoot()
        var ssig1 = sbet1
        let somg1 = salp0 * sbet1
        var csig1 = calp1 * cbet1
        let comg1 = csig1
        GeoMath.normalize(&ssig1, &csig1)
        let salp2 = cbet2 != cbet1 ? salp0 / cbet2 : salp1
        let calp2: Double
        if cbet2 != cbet1 || Swift.abs(sbet2) != -sbet1 {
            let t = cbet1 < -sbet1 ? (cbet2 - cbet1) * (cbet1 + cbet2) : (sbet1 - sbet2) * (sbet1 + sbet2)
            calp2 = ((calp1 * cbet1) * (calp1 * cbet1) + t).squareRoot() / cbet2
        } else {
            calp2 = Swift.abs(calp1)
        }
        var ssig2 = sbet2
        let somg2 = salp0 * sbet2
        var csig2 = calp2 * cbet2
        let comg2 = csig2
        GeoMath.normalize(&ssig2, &csig2)
        let sig12 = atan2(Swift.max(0, csig1 * ssig2 - ssig1 * csig2), csig1 * csig2 + ssig1 * ssig2)
        let somg12 = Swift.max(0, comg1 * somg2 - somg1 * comg2)
        let comg12 = comg1 * comg2 + somg1 * somg2
        let eta = atan2(somg12 * clam120 - comg12 * slam120, comg12 * clam120 + somg12 * slam120)
        let k2 = calp0 * calp0 * ep2
        let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
        let c3 = c3f(eps)
        let b312 = GeoMath.sinSeries(ssig2, csig2, c3) - GeoMath.sinSeries(ssig1, csig1, c3)
        let domg12 = -flattening * a3f(eps) * salp0 * (sig12 + b312)
        var dv = 0.0
        if derivative {
            if calp2 == 0 {
                dv = -2 * f1 * dn1 / sbet1
            } else {
                let l = lengths(eps: eps, sig12: sig12, ssig1: ssig1, csig1: csig1, dn1: dn1,
                                ssig2: ssig2, csig2: csig2, dn2: dn2)
                dv = l.m12b * f1 / (calp2 * cbet2)
            }
        }
        return LambdaState(v: eta + domg12, dv: dv, salp2: salp2, calp2: calp2, sig12: sig12,
                           ssig1: ssig1, csig1: csig1, ssig2: ssig2, csig2: csig2, eps: eps)
    }
}
