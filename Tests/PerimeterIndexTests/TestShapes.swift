import Foundation
import PerimeterGeometry
import PerimeterTestSupport
@testable import PerimeterIndex

/// Random shapes and query points for the property tests.
enum TestShapes {
    /// Snaps to multiples of 2⁻¹² so that collinear and coincident cases really happen.
    static func snap(_ x: Double) -> Double { (x * 4096).rounded() / 4096 }

    /// A closed star-shaped ring around (cx, cy), optionally snapped, counter-clockwise or not.
    static func starRing(_ cx: Double, _ cy: Double, radius: Double, vertices n: Int, snapped: Bool,
                         reversed: Bool = false, using rng: inout SplitMix64) -> [Coordinate] {
        var ring: [Coordinate] = []
        let phase = Double.random(in: 0..<(2 * .pi), using: &rng)
        for k in 0..<n {
            let angle = phase + Double(k) / Double(n) * 2 * .pi
            let r = radius * Double.random(in: 0.5...1, using: &rng)
            var x = cx + r * cos(angle), y = cy + r * sin(angle)
            if snapped { x = snap(x); y = snap(y) }
            ring.append(Coordinate(latitude: y, longitude: x))
        }
        if reversed { ring.reverse() }
        ring.append(ring[0])
        return ring
    }

    /// A ring of random vertices (usually self-intersecting): even-odd still defines it.
    static func scribble(_ cx: Double, _ cy: Double, radius: Double, vertices n: Int,
                         using rng: inout SplitMix64) -> [Coordinate] {
        var ring = (0..<n).map { _ in
            Coordinate(latitude: snap(cy + Double.random(in: -radius...radius, using: &rng)),
                       longitude: snap(cx + Double.random(in: -radius...radius, using: &rng)))
        }
        ring.append(ring[0])
        return ring
    }

    /// An axis-aligned rectangle ring.
    static func rectangle(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> [Coordinate] {
        [Coordinate(latitude: y0, longitude: x0), Coordinate(latitude: y0, longitude: x1),
         Coordinate(latitude: y1, longitude: x1), Coordinate(latitude: y1, longitude: x0),
         Coordinate(latitude: y0, longitude: x0)]
    }

    /// A mixed bag of regions around (lon 2, lat 46), about `count` of them.
    static func mixedRegions(count: Int, using rng: inout SplitMix64) -> [Region] {
        var regions: [Region] = []
        for _ in 0..<count {
            let cx = 2 + Double.random(in: -1...1, using: &rng), cy = 46 + Double.random(in: -1...1, using: &rng)
            let size = Double.random(in: 0.005...0.3, using: &rng)
            switch Int.random(in: 0..<10, using: &rng) {
            case 0, 1:
                let outer = starRing(cx, cy, radius: size, vertices: Int.random(in: 3...60, using: &rng),
                                     snapped: Bool.random(using: &rng), using: &rng)
                regions.append(Region(.polygons([Polygon(rings: [outer])])))
            case 2:
                let outer = starRing(cx, cy, radius: size, vertices: Int.random(in: 8...40, using: &rng),
                                     snapped: true, using: &rng)
                let hole = starRing(cx, cy, radius: size * 0.3, vertices: Int.random(in: 3...12, using: &rng),
                                    snapped: true, reversed: true, using: &rng)
                regions.append(Region(.polygons([Polygon(rings: [outer, hole])])))
            case 3:
                var parts: [Polygon] = []
                for p in 0..<Int.random(in: 2...4, using: &rng) {
                    let dx = Double(p) * size * 1.5 * (Bool.random(using: &rng) ? 1 : 0.4)
                    parts.append(Polygon(rings: [starRing(cx + dx, cy, radius: size, vertices: Int.random(in: 3...20, using: &rng),
                                                          snapped: true, using: &rng)]))
                }
                regions.append(Region(.polygons(parts)))
            case 4:
                regions.append(Region(.polygons([Polygon(rings: [scribble(cx, cy, radius: size,
                                                                          vertices: Int.random(in: 4...30, using: &rng),
                                                                          using: &rng)])])))
            case 5:
                let x0 = snap(cx), y0 = snap(cy)
                regions.append(Region(.polygons([Polygon(rings: [rectangle(x0, y0, snap(x0 + size), snap(y0 + size / 2))])])))
            case 6:
                regions.append(Region(.circle(center: Coordinate(latitude: cy, longitude: cx),
                                              radius: Double.random(in: 10...20_000, using: &rng))))
            case 7:
                let line = (0..<Int.random(in: 1...6, using: &rng)).map { _ in
                    Coordinate(latitude: cy + Double.random(in: -size...size, using: &rng),
                               longitude: cx + Double.random(in: -size...size, using: &rng))
                }
                regions.append(Region(.corridor(lines: [line], radius: Double.random(in: 5...3000, using: &rng))))
            case 8:
                let outer = starRing(cx, cy, radius: size, vertices: Int.random(in: 3...30, using: &rng),
                                     snapped: true, using: &rng)
                regions.append(Region(.polygons([Polygon(rings: [outer])]),
                                      buffer: Double.random(in: 1...2000, using: &rng)))
            default:
                regions.append(Region(.circle(center: Coordinate(latitude: cy, longitude: cx),
                                              radius: Double.random(in: 100...5000, using: &rng)),
                                      buffer: Double.random(in: 0...500, using: &rng)))
            }
        }
        return regions
    }

    /// Query points: random ones, vertices, points on edges, cell lines, cell centres, box edges.
    static func queryPoints(for regions: [Region], index: RegionIndex, count: Int,
                            using rng: inout SplitMix64) -> [Coordinate] {
        var points: [Coordinate] = []
        var vertices: [Coordinate] = []
        var edgePoints: [Coordinate] = []
        var boxes: [BoundingBox] = []
        for region in regions {
            boxes += region.boundingBoxes
            switch region.shape {
            case .polygons(let polygons):
                for ring in polygons.flatMap(\.rings) {
                    vertices += ring
                    for k in 1..<ring.count {
                        let a = ring[k - 1], b = ring[k]
                        // Midpoints of snapped edges are exact, hence exactly on the edge.
                        edgePoints.append(Coordinate(latitude: (a.latitude + b.latitude) / 2,
                                                     longitude: (a.longitude + b.longitude) / 2))
                    }
                }
            case .circle(let center, _): vertices.append(center)
            case .corridor(let lines, _): vertices += lines.joined()
            }
        }
        let grid = index.grid
        for k in 0..<count {
            switch k % 7 {
            case 0, 1:
                points.append(Coordinate(latitude: 46 + Double.random(in: -1.4...1.4, using: &rng),
                                         longitude: 2 + Double.random(in: -1.4...1.4, using: &rng)))
            case 2:
                if let v = vertices.randomElement(using: &rng) { points.append(v) }
            case 3:
                if let v = edgePoints.randomElement(using: &rng) { points.append(v) }
            case 4 where grid.cellCount > 0:
                let column = Int.random(in: 0..<grid.columns, using: &rng), row = Int.random(in: 0..<grid.rows, using: &rng)
                points.append(Coordinate(latitude: grid.minY(row), longitude: grid.minX(column)))
                points.append(Coordinate(latitude: grid.centerY(row), longitude: grid.centerX(column)))
                points.append(Coordinate(latitude: Double.random(in: 45...47, using: &rng), longitude: grid.minX(column)))
            case 5:
                if let b = boxes.randomElement(using: &rng) {
                    points.append(Coordinate(latitude: b.minLatitude, longitude: Double.random(in: b.minLongitude...b.maxLongitude, using: &rng)))
                    points.append(Coordinate(latitude: b.maxLatitude, longitude: b.maxLongitude))
                }
            default:
                // Near a vertex: nudged by a few ulps or a few metres.
                if let v = vertices.randomElement(using: &rng) {
                    points.append(Coordinate(latitude: v.latitude.nextUp, longitude: v.longitude.nextDown))
                    points.append(Coordinate(latitude: v.latitude + Double.random(in: -1e-4...1e-4, using: &rng),
                                             longitude: v.longitude + Double.random(in: -1e-4...1e-4, using: &rng)))
                }
            }
        }
        return points
    }
}
