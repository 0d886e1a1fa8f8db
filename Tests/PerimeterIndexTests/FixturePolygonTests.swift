import Foundation
import PerimeterGeometry
import PerimeterTestSupport
import Testing
@testable import PerimeterIndex

/// The index against brute force on the real polygon sets of ../shared/fixtures/polygons.
@Suite(.enabled(if: Fixtures.available)) struct FixturePolygonTests {
    /// The Polygon and MultiPolygon features of a GeoJSON file, one region each.
    static func loadRegions(_ name: String) throws -> [Region] {
        let json = try JSONSerialization.jsonObject(with: try Fixtures.data("polygons/\(name)"))
        let features = (json as? [String: Any])?["features"] as? [[String: Any]] ?? []
        func ring(_ any: Any) -> [Coordinate] {
            (any as? [[Double]] ?? []).map { Coordinate(latitude: $0[1], longitude: $0[0]) }
        }
        func polygon(_ any: Any) -> Polygon { Polygon(rings: (any as? [Any] ?? []).map(ring)) }
        return features.compactMap { feature in
            guard let geometry = feature["geometry"] as? [String: Any],
                  let type = geometry["type"] as? String, let coordinates = geometry["coordinates"] as? [Any]
            else { return nil }
            switch type {
            case "Polygon": return Region(.polygons([polygon(coordinates)]))
            case "MultiPolygon": return Region(.polygons(coordinates.map(polygon)))
            default: return nil
            }
        }
    }

    @Test(arguments: ["nyc_boroughs.geojson", "naturalearth_lowres_countries.geojson",
                      "chicago_community_areas.geojson", "montreal_election_districts.geojson",
                      "pittsburgh_neighborhoods.geojson", "virginia_counties.geojson", "polygon_holes.geojson"])
    func realPolygonsMatchBruteForce(file: String) throws {
        let regions = try Self.loadRegions(file)
        #expect(!regions.isEmpty)
        let index = RegionIndex(regions: regions)
        #expect(index.statistics.alwaysTestedRegions == 0)
        var rng = SplitMix64(seed: UInt64(file.count))
        var points: [Coordinate] = []
        var extent: BoundingBox?
        var vertices: [Coordinate] = []
        for region in regions {
            guard case .polygons(let polygons) = region.shape else { continue }
            for polygon in polygons {
                if extent == nil { extent = polygon.boundingBox } else { extent!.formUnion(polygon.boundingBox) }
                for ring in polygon.rings { vertices += ring }
            }
        }
        let box = try #require(extent)
        for _ in 0..<1500 {
            points.append(Coordinate(
                latitude: Double.random(in: box.minLatitude - 0.01...box.maxLatitude + 0.01, using: &rng),
                longitude: Double.random(in: box.minLongitude - 0.01...box.maxLongitude + 0.01, using: &rng)))
            let v = vertices[Int.random(in: 0..<vertices.count, using: &rng)]
            points.append(v)
            let w = vertices[Int.random(in: 0..<vertices.count, using: &rng)]
            points.append(Coordinate(latitude: w.latitude + Double.random(in: -1e-4...1e-4, using: &rng),
                                     longitude: w.longitude + Double.random(in: -1e-4...1e-4, using: &rng)))
        }
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }
}
