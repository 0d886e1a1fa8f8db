import Foundation

/// The direct problem (Karney 2013, §3): where a geodesic of given start, azimuth and length ends.
extension Geodesic {
    /// The coordinate reached by travelling `distance` metres from `start` along the geodesic that
    /// leaves it at `azimuth` degrees clockwise from north. Negative distances go backwards.
    ///
    /// The returned longitude is reduced to −180…180.
    /// - Complexity: O(1); allocation-free.
    public func destination(from start: Coordinate, azimuth: Double, distance: Double) -> Coordinate {
        solveDirect(start, azimuth: azimuth, distance: distance).coordinate
    }

    /// The direct problem with the forward azimuth at the end point (degrees).
    func solveDirect(_ start: Coordinate, azimuth: Double, distance s12: Double)
        -> (coordinate: Coordinate, azimuth2: Double) {
        let tiny = GeoMath.tiny
        let lat1 = GeoMath.angRound(Swift.max(-90, Swift.min(90, start.latitude)))
        let (salp1, calp1) = GeoMath.sincosd(GeoMath.angRound(azimuth))
        var (sbet1, cbet1) = GeoMath.sincosd(lat1)
        sbet1 *= f1
        GeoMath.normalize(&sbet1, &cbet1)
        cbet1 = Swift.max(tiny, cbet1)

        // The geodesic's equatorial azimuth α₀ and the start on the auxiliary sphere.
        let salp0 = salp1 * cbet1
        let calp0 = (calp1 * calp1 + (salp1 * sbet1) * (salp1 * sbet1)).squareRoot()
        var ssig1 = sbet1
        let somg1 = salp0 * sbet1
        var csig1 = sbet1 != 0 || calp1 != 0 ? cbet1 * calp1 : 1
        let comg1 = csig1
        GeoMath.normalize(&ssig1, &csig1)

        let k2 = calp0 * calp0 * ep2
        let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
        let a1 = 1 + Geodesic.a1m1(eps)
        let c1 = Geodesic.c1(eps), c1p = Geodesic.c1p(eps)
        let b11 = GeoMath.sinSeries(ssig1, csig1, c1)
        let sb = sin(b11), cb = cos(b11)
        let stau1 = ssig1 * cb + csig1 * sb
        let ctau1 = csig1 * cb - ssig1 * sb
        let c3 = c3f(eps)
        let a3c = -flattening * salp0 * a3f(eps)
        let b31 = GeoMath.sinSeries(ssig1, csig1, c3)

        // Distance → arc length on the auxiliary sphere through the reverted series (eq. 20).
        let tau12 = s12 / (b * a1)
        let st = sin(tau12), ct = cos(tau12)
        let b12 = -GeoMath.sinSeries(stau1 * ct + ctau1 * st, ctau1 * ct - stau1 * st, c1p)
        let sig12 = tau12 - (b12 - b11)
        let ssig12 = sin(sig12), csig12 = cos(sig12)
        let ssig2 = ssig1 * csig12 + csig1 * ssig12
        var csig2 = csig1 * csig12 - ssig1 * ssig12

        let sbet2 = calp0 * ssig2
        var cbet2 = (salp0 * salp0 + (calp0 * csig2) * (calp0 * csig2)).squareRoot()
        if cbet2 == 0 {
            cbet2 = tiny
            csig2 = tiny
        }
        let somg2 = salp0 * ssig2, comg2 = csig2
        let salp2 = salp0, calp2 = calp0 * csig2
        let omg12 = atan2(somg2 * comg1 - comg2 * somg1, comg2 * comg1 + somg2 * somg1)
        let lam12 = omg12 + a3c * (sig12 + (GeoMath.sinSeries(ssig2, csig2, c3) - b31))
        let lon12 = lam12 / GeoMath.degree
        let lon2 = GeoMath.angNormalize(GeoMath.angNormalize(start.longitude) + GeoMath.angNormalize(lon12))
        let lat2 = GeoMath.atan2d(sbet2, f1 * cbet2)
        return (Coordinate(latitude: lat2, longitude: lon2), GeoMath.atan2d(salp2, calp2))
    }
}
