import Foundation
import PerimeterGeometry

/// Geometry the options need beyond point membership: where a straight segment between two fixes runs
/// inside a region, and how an accuracy disc lies relative to a region.
enum SegmentGeometry {
    /// The point at parameter `u` ∈ [0, 1] of the straight lon/lat segment a–b (the short way round),
    /// longitude normalised to −180 ..< 180.
    static func point(_ a: Coordinate, _ b: Coordinate, at u: Double) -> Coordinate {
        let bx = b.longitude + 360 * ((a.longitude - b.longitude) / 360).rounded()
        var lon = a.longitude + u * (bx - a.longitude)
        if lon >= 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        return Coordinate(latitude: a.latitude + u * (b.latitude - a.latitude), longitude: lon)
    }

    /// The parameter intervals of the segment a–b that lie inside `region`, ascending and disjoint.
    ///
    /// Polygons without buffer are exact: the segment is cut at every ring edge it crosses and each
    /// piece is classified by its midpoint. Circles, corridors and buffered polygons are sampled every
    /// quarter of their radius (buffer), at most 25 m and at least 0.5 m apart, and every change is
    /// refined by bisection to about a millimetre; only a path that grazes the outer ~1 % of a circle's
    /// radius can be missed.
    /// - Complexity: O(edges) for polygons, O(length / spacing) sampled contains tests otherwise
    ///   (at most 20,000).
    static func insideIntervals(of region: Region, from a: Coordinate, to b: Coordinate) -> [(start: Double, end: Double)] {
        let contains = { (u: Double) in region.contains(point(a, b, at: u)) }
        if case .polygons(let polygons) = region.shape, region.buffer == 0 {
            var cuts: [Double] = [0, 1]
            let bx = b.longitude + 360 * ((a.longitude - b.longitude) / 360).rounded()
            let b2 = Coordinate(latitude: b.latitude, longitude: bx)
            for polygon in polygons {
                for ring in polygon.rings {
                    for (p, q) in zip(ring, ring.dropFirst()) {
                        for shift in [-360.0, 0, 360] {
                            if let u = crossing(a, b2, Coordinate(latitude: p.latitude, longitude: p.longitude + shift),
                                                Coordinate(latitude: q.latitude, longitude: q.longitude + shift)) {
                                cuts.append(u)
                            }
                        }
                    }
                }
            }
            cuts.sort()
            var intervals: [(start: Double, end: Double)] = []
            for (u0, u1) in zip(cuts, cuts.dropFirst()) where u1 > u0 {
                guard contains((u0 + u1) / 2) else { continue }
                if let last = intervals.last, last.end >= u0 {
                    intervals[intervals.count - 1].end = u1
                } else {
                    intervals.append((u0, u1))
                }
            }
            return intervals
        }
        let scale: Double
        switch region.shape {
        case .circle(_, let radius), .corridor(_, let radius): scale = radius + region.buffer
        case .polygons: scale = region.buffer
        }
        let spacing = min(25, max(0.5, scale / 4))
        let length = Geodesic.wgs84.distance(from: a, to: point(a, b, at: 1))
        let n = max(1, min(20_000, Int((length / spacing).rounded(.up))))
        var intervals: [(start: Double, end: Double)] = []
        var previousInside = contains(0)
        var start: Double? = previousInside ? 0 : nil
        for i in 1...n {
            let u = Double(i) / Double(n)
            let inside = contains(u)
            if inside != previousInside {
                let edge = bisect(Double(i - 1) / Double(n), u, insideAtLow: previousInside, contains)
                if inside { start = edge } else if let s = start { intervals.append((s, edge)); start = nil }
            }
            previousInside = inside
        }
        if let s = start { intervals.append((s, 1)) }
        return intervals
    }

    /// The boundary between `low` and `high` where membership changes.
    private static func bisect(_ low: Double, _ high: Double, insideAtLow: Bool, _ contains: (Double) -> Bool) -> Double {
        var lo = low, hi = high
        for _ in 0..<40 where hi - lo > 1e-9 {
            let mid = (lo + hi) / 2
            if contains(mid) == insideAtLow { lo = mid } else { hi = mid }
        }
        return insideAtLow ? lo : hi
    }

    /// The parameter on a–b where it crosses p–q (planar lon/lat), if it does.
    private static func crossing(_ a: Coordinate, _ b: Coordinate, _ p: Coordinate, _ q: Coordinate) -> Double? {
        let rx = b.longitude - a.longitude, ry = b.latitude - a.latitude
        let sx = q.longitude - p.longitude, sy = q.latitude - p.latitude
        let denominator = rx * sy - ry * sx
        guard denominator != 0 else { return nil }
        let wx = p.longitude - a.longitude, wy = p.latitude - a.latitude
        let u = (wx * sy - wy * sx) / denominator
        let v = (wx * ry - wy * rx) / denominator
        guard u >= 0, u <= 1, v >= 0, v <= 1, u.isFinite else { return nil }
        return u
    }

    /// How a disc of radius `r` metres around `c` lies relative to `region`.
    /// - Returns: `inside` when the whole disc is inside, `outside` when none of it is.
    static func disc(_ c: Coordinate, radius r: Double, in region: Region) -> (inside: Bool, outside: Bool) {
        let touches = Region(region.shape, buffer: region.buffer + r).contains(c)
        guard touches else { return (false, true) }
        let inside: Bool
        switch region.shape {
        case .circle, .corridor:
            // The shrunken shape: radius + buffer − r (a negative total contains nothing).
            inside = Region(region.shape, buffer: region.buffer - r).contains(c)
        case .polygons(let polygons):
            let margin = region.buffer - r
            if margin >= 0 {
                inside = Region(region.shape, buffer: margin).contains(c)
            } else {
                let rings = polygons.flatMap(\.rings)
                inside = Region(region.shape).contains(c)
                    && !Region(.corridor(lines: rings, radius: -margin)).contains(c)
            }
        }
        return (inside, false)
    }
}
