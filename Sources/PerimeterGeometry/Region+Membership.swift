import Foundation

extension Region {
    /// Whether `c` is inside the region (boundary included).
    ///
    /// - `.polygons`: inside any polygon (union; even-odd within each, boundary inside), or, when
    ///   `buffer > 0`, within `buffer` metres of any ring edge.
    /// - `.circle`: geodesic distance to the centre ≤ radius + buffer.
    /// - `.corridor`: distance to some segment of some line ≤ radius + buffer; a line of one position
    ///   is a circle around it. Corridor segments go the short way round (across ±180 when their
    ///   longitudes differ by more than 180°).
    ///
    /// Distances are WGS84 geodesic (see ``Geodesic/distance(from:toSegment:_:)``); far shapes are
    /// rejected with conservative degree margins before any geodesic is solved.
    /// - Complexity: O(n) in the number of vertices; no allocation.
    public func contains(_ c: Coordinate) -> Bool {
        switch shape {
        case .polygons(let polygons):
            for polygon in polygons where polygon.contains(c) { return true }
            guard buffer > 0 else { return false }
            return Region.isNearEdge(c, of: polygons, within: buffer)
        case .circle(let center, let radius):
            let r = radius + buffer
            guard r >= 0 else { return false }
            let margin = DistanceMargin(metres: r, around: c.latitude)
            guard margin.mayReach(c, center, center) else { return false }
            return Geodesic.wgs84.distance(from: center, to: c) <= r
        case .corridor(let lines, let radius):
            let r = radius + buffer
            guard r >= 0 else { return false }
            return Region.isNear(c, lines: lines, within: r)
        }
    }

    /// Whether `c` is within `r` metres of an edge of any ring of any polygon (edges taken literally).
    static func isNearEdge(_ c: Coordinate, of polygons: [Polygon], within r: Double) -> Bool {
        let margin = DistanceMargin(metres: r, around: c.latitude)
        for polygon in polygons {
            let box = polygon.boundingBox
            guard margin.mayReach(c, minLongitude: box.minLongitude, maxLongitude: box.maxLongitude,
                                  minLatitude: box.minLatitude, maxLatitude: box.maxLatitude) else { continue }
            for ring in polygon.rings {
                guard var a = ring.last else { continue }
                if ring.count == 1, Geodesic.wgs84.distance(from: c, to: a) <= r { return true }
                for b in ring {
                    defer { a = b }
                    if a == b || !margin.mayReach(c, a, b) { continue }
                    if Geodesic.wgs84.distance(from: c, toSegment: a, b) <= r { return true }
                }
            }
        }
        return false
    }

    /// Whether `c` is within `r` metres of some segment of some line (segments the short way round).
    static func isNear(_ c: Coordinate, lines: [[Coordinate]], within r: Double) -> Bool {
        let margin = DistanceMargin(metres: r, around: c.latitude)
        for line in lines {
            guard var a = line.first else { continue }
            if line.count == 1 {
                if margin.mayReach(c, a, a), Geodesic.wgs84.distance(from: a, to: c) <= r { return true }
                continue
            }
            for b in line.dropFirst() {
                defer { a = b }
                let near = Region.unwrapped(b, toward: a)
                if !margin.mayReach(c, a, near) { continue }
                if Geodesic.wgs84.distance(from: c, toSegment: a, near) <= r { return true }
            }
        }
        return false
    }

    /// `b` with its longitude moved by a multiple of 360° to within 180° of `a`'s.
    @inline(__always)
    static func unwrapped(_ b: Coordinate, toward a: Coordinate) -> Coordinate {
        Coordinate(latitude: b.latitude,
                   longitude: b.longitude + 360 * ((a.longitude - b.longitude) / 360).rounded())
    }
}
