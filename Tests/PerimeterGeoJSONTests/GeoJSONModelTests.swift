import Foundation
import Testing
@testable import PerimeterGeoJSON

@Suite struct GeoJSONModelTests {
    typealias P = GeoJSON.Position

    static let ring = [P(longitude: 0, latitude: 0), P(longitude: 1, latitude: 0), P(longitude: 1, latitude: 1),
                       P(longitude: 0, latitude: 0)]
    static let geometries: [GeoJSON.Geometry] = [
        .point(GeoJSON.Point(P(longitude: 1.5, latitude: -2, altitude: 30))),
        .multiPoint(GeoJSON.MultiPoint([P(longitude: 1, latitude: 2), P(longitude: 3, latitude: 4)])),
        .lineString(GeoJSON.LineString([P(longitude: 1, latitude: 2), P(longitude: 3, latitude: 4)],
                                       bbox: GeoJSON.BoundingBox(west: 1, south: 2, east: 3, north: 4))),
        .multiLineString(GeoJSON.MultiLineString([[P(longitude: 1, latitude: 2), P(longitude: 3, latitude: 4)]])),
        .polygon(GeoJSON.Polygon([ring, ring])),
        .multiPolygon(GeoJSON.MultiPolygon([[ring], [ring]])),
        .geometryCollection(GeoJSON.GeometryCollection([
            .point(GeoJSON.Point(P(longitude: 0, latitude: 0))),
            .geometryCollection(GeoJSON.GeometryCollection([])),
        ], bbox: GeoJSON.BoundingBox(west: 0, south: 0, east: 0, north: 0, altitudes: -1...2))),
    ]

    @Test(arguments: geometries)
    func everyGeometryRoundTripsThroughBothPaths(geometry: GeoJSON.Geometry) throws {
        let object = GeoJSON.Object.featureCollection(GeoJSON.FeatureCollection([
            GeoJSON.Feature(id: .integer(9_007_199_254_740_993), geometry: geometry, properties: ["k": [1, "v"]]),
            GeoJSON.Feature(id: .string("s"), geometry: nil),
            GeoJSON.Feature(id: .double(2.5), geometry: geometry, bbox: GeoJSON.BoundingBox(west: 170, south: 0, east: -170, north: 1)),
        ]))
        let written = JSONWriter().string(object)
        let fast = fastRead(written)
        #expect(fast.problems.isEmpty)
        #expect(fast.object == object)
        #expect(try decoderRead(written) == object)
        let encoded = try JSONEncoder().encode(object)
        #expect(try JSONDecoder().decode(GeoJSON.Object.self, from: encoded) == object)
        #expect(GeoJSONReader().read([UInt8](encoded)).object == object)
        // Bare geometry and single feature too.
        #expect(fastRead(JSONWriter().string(.geometry(geometry))).object == .geometry(geometry))
        #expect(try decoderRead(JSONWriter().string(.feature(GeoJSON.Feature(geometry: geometry)))) ==
            .feature(GeoJSON.Feature(geometry: geometry)))
    }

    @Test func exactIDsThroughBothPaths() throws {
        let text = #"{"type":"Feature","id":9007199254740993,"geometry":null,"properties":null}"#
        let expected = GeoJSON.Object.feature(GeoJSON.Feature(id: .integer(9_007_199_254_740_993), geometry: nil))
        #expect(fastRead(text).object == expected)
        #expect(try decoderRead(text) == expected)
        #expect(JSONWriter().string(expected) == #"{"type":"Feature","id":9007199254740993,"geometry":null,"properties":{}}"#)
    }

    @Test func foreignMembersAreToleratedAndTypeMayComeLast() throws {
        let text = """
            {"crs":{"type":"name","properties":{"name":"urn:ogc:def:crs:OGC:1.3:CRS84"}},"features":[
             {"properties":{"a":1},"geometry":{"coordinates":[1,2],"extra":[[[]]],"type":"Point"},"title":"x","type":"Feature"}
            ],"bbox":[1,2,1,2],"type":"FeatureCollection"}
            """
        let expected = GeoJSON.Object.featureCollection(GeoJSON.FeatureCollection(
            [GeoJSON.Feature(geometry: .point(GeoJSON.Point(P(longitude: 1, latitude: 2))), properties: ["a": 1])],
            bbox: GeoJSON.BoundingBox(west: 1, south: 2, east: 1, north: 2)))
        let fast = fastRead(text)
        #expect(fast.problems.isEmpty)
        #expect(fast.object == expected)
        #expect(try decoderRead(text) == expected)
    }

    @Test func missingGeometryIsNullWithAWarning() throws {
        let text = #"{"type":"Feature","properties":{}}"#
        let fast = fastRead(text)
        #expect(fast.object == .feature(GeoJSON.Feature(geometry: nil)))
        #expect(fast.problems.map(\.message) == ["Feature has no \"geometry\" member; read as null"])
        #expect(fast.problems.first?.severity == .warning)
        #expect(try decoderRead(text) == .feature(GeoJSON.Feature(geometry: nil)))
    }

    @Test(arguments: [
        #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}"#,
        #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}"#,
        #"{"type":"LineString","coordinates":[[0,0]]}"#,
        #"{"type":"Point","coordinates":[0]}"#,
        #"{"type":"Point","coordinates":[0,91]}"#,
        #"{"type":"Point","coordinates":[541,0]}"#,
        #"{"type":"Point","coordinates":["0",0]}"#,
        #"{"type":"Point"}"#,
        #"{"type":"Circle","coordinates":[0,0]}"#,
        #"{"type":"Point","coordinates":[0,0],"bbox":[1,2,3]}"#,
        #"{"type":"MultiLineString","coordinates":[[]]}"#,
        #"{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[0,100]}]}"#,
        #"{"type":"Feature","id":true,"geometry":null,"properties":{}}"#,
        #"{"type":"Feature","geometry":null,"properties":[]}"#,
        #"{"type":"FeatureCollection","features":{}}"#,
        #"{"type":"FeatureCollection","features":[{"type":"Point","coordinates":[0,0]}]}"#,
    ])
    func decoderRejectsWhatTheReaderRejects(text: String) {
        #expect(fastRead(text).hasErrors)
        #expect(throws: DecodingError.self) { try decoderRead(text) }
    }

    @Test func warningsDoNotRejectInEitherPath() throws {
        let text = #"{"type":"Point","coordinates":[200,10]}"#
        let fast = fastRead(text)
        #expect(fast.object == .geometry(.point(GeoJSON.Point(P(longitude: 200, latitude: 10)))))
        #expect(fast.warnings.count == 1 && !fast.hasErrors)
        #expect(try decoderRead(text) == fast.object)
    }
}
