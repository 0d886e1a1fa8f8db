// PLACEHOLDER (to be replaced by the geometry work): naive membership so dependants compile.
import Foundation

extension Region {
    /// Whether `c` is inside the region (boundary included).
    public func contains(_ c: Coordinate) -> Bool {
        switch shape {
        case .polygons(let polygons):
            return polygons.contains { p in
                var inside = false
                for ring in p.rings where ring.count > 1 {
                    for i in 0..<(ring.count - 1) {
                        let a = ring[i], b = ring[i + 1]
                        if (a.latitude > c.latitude) != (b.latitude > c.latitude) {
                            let x = a.longitude + (c.latitude - a.latitude) / (b.latitude - a.latitude) * (b.longitude - a.longitude)
                            if c.longitude < x { inside.toggle() }
                        }
                    }
                }
                return inside
            }
        case .circle(let center, let radius):
            let dlat = (c.latitude - center.latitude) * 111_320
            let dlon = (c.longitude - center.longitude) * 111_320 * cos(center.latitude * .pi / 180)
            return (dlat * dlat + dlon * dlon).squareRoot() <= radius + buffer
        case .corridor:
            return false
        }
    }

    /// Boxes (never crossing the antimeridian) that together hold every point of the region.
    public var boundingBoxes: [BoundingBox] {
        switch shape {
        case .polygons(let polygons):
            return BoundingBox(covering: polygons.flatMap { $0.rings.first ?? [] }).map { [$0] } ?? []
        case .circle(let center, let radius):
            let d = (radius + buffer) / 111_320 * 2
            return [BoundingBox(minLongitude: center.longitude - d, minLatitude: center.latitude - d,
                                maxLongitude: center.longitude + d, maxLatitude: center.latitude + d)]
        case .corridor(let lines, _):
            return BoundingBox(covering: lines.joined()).map { [$0] } ?? []
        }
    }
}
