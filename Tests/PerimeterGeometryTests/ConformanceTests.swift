import Foundation
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// The shared Turf and GEOS point-in-polygon cases.
@Suite(.enabled(if: Fixtures.available))
struct ConformanceTests {
    struct TurfFile: Decodable {
        struct Geometry: Decodable {
            var type: String
            var coordinates: AnyCoordinates
        }
        struct Case: Decodable {
            var polygon: String
            var point: [Double]
            var inside_boundary_included: Bool
            var on_boundary: Bool
        }
        var polygons: [String: Geometry]
        var cases: [Case]
    }

    /// Nested coordinate arrays of any depth.
    indirect enum AnyCoordinates: Decodable {
        case position([Double])
        case nested([AnyCoordinates])
        init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if let p = try? c.decode([Double].self) { self = .position(p) } else { self = .nested(try c.decode([AnyCoordinates].self)) }
        }
        var rings: [[Coordinate]] {
            guard case .nested(let rs) = self else { return [] }
            return rs.map { r in
                guard case .nested(let ps) = r else { return [] }
                return ps.compactMap { p in
                    guard case .position(let v) = p, v.count >= 2 else { return nil }
                    return xy(v[0], v[1])
                }
            }
        }
        var children: [AnyCoordinates] {
            if case .nested(let xs) = self { return xs }
            return []
        }
    }

    static func turfRegion(_ g: TurfFile.Geometry) -> Region {
        switch g.type {
        case "Polygon": return Region(.polygons([Polygon(rings: g.coordinates.rings)]))
        default: return Region(.polygons(g.coordinates.children.map { Polygon(rings: $0.rings) }))
        }
    }

    @Test func turfPointInPolygonCases() throws {
        let file = try JSONDecoder().decode(TurfFile.self, from: Fixtures.data("conformance/turf/turf_point_in_polygon_cases.json"))
        #expect(file.cases.count == 50)
        for (i, c) in file.cases.enumerated() {
            let g = try #require(file.polygons[c.polygon], "case \(i): unknown polygon \(c.polygon)")
            let region = Self.turfRegion(g)
            let p = xy(c.point[0], c.point[1])
            // poly6 (invalid overlapping MultiPolygon): union across polygons → inside, as Turf says.
            #expect(region.contains(p) == c.inside_boundary_included, "case \(i) \(c.polygon) \(c.point)")
            if c.on_boundary {
                // A boundary point stays inside at every ±360 representation the box allows.
                #expect(region.contains(p))
            }
        }
    }

    struct GEOSFile: Decodable {
        struct Case: Decodable {
            var desc: String
            var a: String
            var b: String
            var expected: [String: Bool]
        }
        var cases: [Case]
    }

    @Test func geosPointVersusAreaCases() throws {
        let file = try JSONDecoder().decode(GEOSFile.self, from: Fixtures.data("conformance/geos_xml/point_vs_area_cases.json"))
        #expect(file.cases.count == 66)
        var checked = 0
        for c in file.cases {
            let a = try WKT.parse(c.a), b = try WKT.parse(c.b)
            let points: [Coordinate], polygons: [Polygon], pointsFirst: Bool
            switch (a, b) {
            case (.points(let p), .polygons(let q)): points = p; polygons = q; pointsFirst = true
            case (.polygons(let q), .points(let p)): points = p; polygons = q; pointsFirst = false
            default: Issue.record("unexpected geometry pair in \(c.desc)"); continue
            }
            let region = Region(.polygons(polygons))
            let inside = points.map(region.contains)
            let any = inside.contains(true), all = !inside.isEmpty && !inside.contains(false)
            var predicates = 0
            // Our contains == GEOS covers / coveredBy / intersects for a point.
            if let v = c.expected["intersects"] { #expect(any == v, "\(c.desc): intersects"); predicates += 1 }
            if let v = c.expected["disjoint"] { #expect(!any == v, "\(c.desc): disjoint"); predicates += 1 }
            if pointsFirst, let v = c.expected["coveredBy"] { #expect(all == v, "\(c.desc): coveredBy"); predicates += 1 }
            if !pointsFirst, let v = c.expected["covers"] { #expect(all == v, "\(c.desc): covers"); predicates += 1 }
            // isWithinDistance: the true case is at distance 0 (= intersects); the false case implies disjoint.
            if let v = c.expected["isWithinDistance"] { #expect(any == v, "\(c.desc): isWithinDistance"); predicates += 1 }
            if predicates > 0 { checked += 1 }
        }
        #expect(checked == 66)
    }
}
