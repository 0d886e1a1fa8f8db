import Foundation
import PerimeterGeometry
import Testing
import PerimeterTestSupport

/// Segment distance, circles, corridors, buffers and bounding boxes against brute force.
@Suite struct RegionTests {
    let g = Geodesic.wgs84

    /// Brute force: dense sampling of the lon/lat segment, then golden-section refinement around
    /// the best sample, all with geodesic distances.
    func sampledDistance(_ p: Coordinate, _ a: Coordinate, _ b: Coordinate) -> Double {
        func at(_ t: Double) -> Double {
            g.distance(from: p, to: Coordinate(latitude: a.latitude + t * (b.latitude - a.latitude),
                                               longitude: a.longitude + t * (b.longitude - a.longitude)))
        }
        let n = 200
        var best = 0
        var bestValue = Double.infinity
        for i in 0...n {
            let d = at(Double(i) / Double(n))
            if d < bestValue { bestValue = d; best = i }
        }
        var lo = Double(max(0, best - 1)) / Double(n), hi = Double(min(n, best + 1)) / Double(n)
        let phi = (5.0.squareRoot() - 1) / 2
        for _ in 0..<60 {
            let m1 = hi - phi * (hi - lo), m2 = lo + phi * (hi - lo)
            if at(m1) < at(m2) { hi = m2 } else { lo = m1 }
        }
        return min(bestValue, at((lo + hi) / 2))
    }

    @Test func segmentDistanceMatchesDenseSampling() {
        var rng = SplitMix64(seed: 99)
        var worstRelative = 0.0
        for i in 0..<400 {
            let lat = i % 4 == 0 ? Double.random(in: -85...85, using: &rng) : Double.random(in: -60...60, using: &rng)
            let a = Coordinate(latitude: lat, longitude: .random(in: -179...179, using: &rng))
            let b = g.destination(from: a, azimuth: .random(in: -180...180, using: &rng), distance: .random(in: 0...50_000, using: &rng))
            let bUnwrapped = Coordinate(latitude: b.latitude, longitude: b.longitude + 360 * ((a.longitude - b.longitude) / 360).rounded())
            let mid = Coordinate(latitude: (a.latitude + bUnwrapped.latitude) / 2, longitude: (a.longitude + bUnwrapped.longitude) / 2)
            let p = g.destination(from: mid, azimuth: .random(in: -180...180, using: &rng), distance: .random(in: 0...40_000, using: &rng))
            let ours = g.distance(from: p, toSegment: a, bUnwrapped)
            let truth = sampledDistance(p, a, bUnwrapped)
            #expect(ours >= truth - 1e-6, "never below the true distance")
            #expect(ours - truth <= max(0.5, 0.001 * truth), "\(p) to \(a)–\(bUnwrapped): \(ours) vs \(truth)")
            if truth > 1 { worstRelative = max(worstRelative, (ours - truth) / truth) }
        }
        #expect(worstRelative < 0.001)
    }

    @Test func segmentDistanceAcrossTheAntimeridian() {
        // A segment written 179.9 → 180.1 and the point given at −179.95 (≡ 180.05).
        let a = xy(179.9, 10), b = xy(180.1, 10)
        let d = g.distance(from: xy(-179.95, 10.01), toSegment: a, b)
        #expect(abs(d - g.distance(from: xy(180.05, 10.01), to: xy(180.05, 10))) < 1)
        // Degenerate segment = point distance.
        #expect(g.distance(from: xy(1, 1), toSegment: xy(1, 2), xy(1, 2)) == g.distance(from: xy(1, 1), to: xy(1, 2)))
    }

    @Test func circleBoundaryAndDirectProblemAgree() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<500 {
            let center = Coordinate(latitude: .random(in: -89...89, using: &rng), longitude: .random(in: -180...180, using: &rng))
            let radius = Double.random(in: 1...200_000, using: &rng), buffer = Double.random(in: 0...100, using: &rng)
            let region = Region(.circle(center: center, radius: radius), buffer: buffer)
            let az = Double.random(in: -180...180, using: &rng)
            let r = radius + buffer
            let inside = g.destination(from: center, azimuth: az, distance: r * (1 - 1e-7))
            let outside = g.destination(from: center, azimuth: az, distance: r * (1 + 1e-7) + 1e-3)
            #expect(region.contains(inside))
            #expect(!region.contains(outside))
            #expect(region.contains(center))
            #expect(Self.boxesHold(region.boundingBoxes, inside))
        }
    }

    @Test func corridorMatchesSampling() {
        var rng = SplitMix64(seed: 8)
        for _ in 0..<25 {
            var line = [Coordinate(latitude: .random(in: -70...70, using: &rng), longitude: .random(in: -180...180, using: &rng))]
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let next = g.destination(from: line.last!, azimuth: .random(in: -180...180, using: &rng), distance: .random(in: 100...30_000, using: &rng))
                line.append(next)
            }
            let radius = Double.random(in: 10...3000, using: &rng)
            let region = Region(.corridor(lines: [line], radius: radius))
            let boxes = region.boundingBoxes
            for _ in 0..<40 {
                let base = line[Int.random(in: 0..<line.count, using: &rng)]
                let p = g.destination(from: base, azimuth: .random(in: -180...180, using: &rng), distance: .random(in: 0...(2 * radius), using: &rng))
                var truth = Double.infinity
                for i in 0..<(line.count - 1) {
                    let b = line[i + 1]
                    let bu = Coordinate(latitude: b.latitude, longitude: b.longitude + 360 * ((line[i].longitude - b.longitude) / 360).rounded())
                    truth = min(truth, sampledDistance(p, line[i], bu))
                }
                if truth < radius * 0.999 - 0.5 {
                    #expect(region.contains(p), "\(p) at \(truth) of radius \(radius)")
                    #expect(Self.boxesHold(boxes, p))
                } else if truth > radius * 1.001 + 0.5 {
                    #expect(!region.contains(p), "\(p) at \(truth) of radius \(radius)")
                }
            }
        }
    }

    @Test func singlePositionCorridorIsACircle() {
        let c = xy(2.35, 48.85)
        let corridor = Region(.corridor(lines: [[c]], radius: 100), buffer: 20)
        #expect(corridor.contains(g.destination(from: c, azimuth: 30, distance: 119.9)))
        #expect(!corridor.contains(g.destination(from: c, azimuth: 30, distance: 120.1)))
        #expect(!Region(.corridor(lines: [], radius: 100)).contains(c))
    }

    @Test func corridorAcrossTheAntimeridianGoesTheShortWay() {
        let region = Region(.corridor(lines: [[xy(179.9, -17), xy(-179.9, -17)]], radius: 500))
        #expect(region.contains(xy(180, -17)))
        #expect(region.contains(xy(-180, -17.002)))
        #expect(!region.contains(xy(0, -17)))
        let boxes = region.boundingBoxes
        #expect(boxes.count == 2)
        #expect(Self.boxesHold(boxes, xy(180, -17)) && Self.boxesHold(boxes, xy(-180, -17)))
        #expect(boxes.allSatisfy { $0.minLongitude >= -180 && $0.maxLongitude <= 180 && $0.width < 1 })
    }

    @Test func polygonBufferReachesOutsideEdges() {
        var rng = SplitMix64(seed: 3)
        let square = Polygon(rings: [ring([(10, 50), (10.1, 50), (10.1, 50.1), (10, 50.1)])])
        let region = Region(.polygons([square]), buffer: 250)
        let edges = [(xy(10, 50), xy(10.1, 50)), (xy(10.1, 50), xy(10.1, 50.1)), (xy(10.1, 50.1), xy(10, 50.1)), (xy(10, 50.1), xy(10, 50))]
        for _ in 0..<300 {
            let p = xy(.random(in: 9.99...10.11, using: &rng), .random(in: 49.99...50.11, using: &rng))
            let inside = square.contains(p)
            let truth = edges.map { sampledDistance(p, $0.0, $0.1) }.min()!
            if inside || truth < 249 {
                #expect(region.contains(p))
                #expect(Self.boxesHold(region.boundingBoxes, p))
            } else if truth > 251 {
                #expect(!region.contains(p))
            }
        }
        #expect(!Region(.polygons([square])).contains(xy(9.9999, 50.05)))
        #expect(Region(.polygons([square]), buffer: 10).contains(xy(9.9999, 50.05)))
    }

    @Test func boxesClampAtPolesAndSplitAtTheAntimeridian() {
        let polar = Region(.circle(center: xy(20, 89.99), radius: 5000))
        let boxes = polar.boundingBoxes
        #expect(boxes == [BoundingBox(minLongitude: -180, minLatitude: boxes[0].minLatitude, maxLongitude: 180, maxLatitude: 90)])
        #expect(polar.contains(xy(-160, 89.99)))

        let dateline = Region(.circle(center: xy(179.99, 0), radius: 10_000))
        let split = dateline.boundingBoxes
        #expect(split.count == 2)
        #expect(split.allSatisfy { $0.minLongitude >= -180 && $0.maxLongitude <= 180 })
        #expect(Self.boxesHold(split, xy(-179.95, 0)) && Self.boxesHold(split, xy(179.95, 0)))
        #expect(dateline.contains(xy(-179.95, 0)))

        // Boxes grow toward the poles: 1 km spans more longitude at 80° than at 0°.
        let low = Region(.circle(center: xy(0, 0), radius: 1000)).boundingBoxes[0]
        let high = Region(.circle(center: xy(0, 80), radius: 1000)).boundingBoxes[0]
        #expect(high.width > 5 * low.width)
        #expect(abs(low.height - 2 * 1000 / 110_574) < 1e-4)

        // A polygon written past 180 is boxed on both sides, plus the touching meridian.
        let fiji = Region(.polygons([Polygon(rings: [ring([(177, -18), (182, -18), (182, -16), (177, -16)])])]))
        #expect(fiji.boundingBoxes.count == 2)
        #expect(Self.boxesHold(fiji.boundingBoxes, xy(-179, -17)))
        let touching = Region(.polygons([Polygon(rings: [ring([(170, -18), (180, -18), (180, -16), (170, -16)])])]))
        #expect(Self.boxesHold(touching.boundingBoxes, xy(-180, -17)) && touching.contains(xy(-180, -17)))
        #expect(Region(.circle(center: xy(0, 0), radius: -1)).boundingBoxes.isEmpty)
    }

    /// Whether some box holds the point.
    static func boxesHold(_ boxes: [BoundingBox], _ p: Coordinate) -> Bool {
        boxes.contains { $0.contains(p) }
    }
}
