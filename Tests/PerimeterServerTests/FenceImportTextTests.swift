import Foundation
import PerimeterGeoJSON
import PerimeterServer
@testable import PerimeterSQLite
import PerimeterTestSupport
import Testing

/// `POST /v1/fences` keeps each feature's JSON text as it came for the store instead of writing it anew;
/// what a restarted server reads back from that text is the feature it was given.
@Suite("Fence import: the store keeps each feature's text", .serialized)
struct FenceImportTextTests {
    /// Features written as people and other tools write them: spaces and newlines, members in any order,
    /// escapes, numbers that `JSONWriter` would write differently, an integer id, nested properties.
    static let features = [
        #"{ "type" : "Feature" , "id" : "alpha",  "properties": {"name": "caf\u00e9 \ud83d\ude00", "quote": "say \"hi\"", "rank": 1.50, "big": 1E2, "tags": [true, null, -0]},"#
            + "\n\t" + #""geometry": {"coordinates": [[[-110.6, 44.5], [-110.4, 44.50], [-110.4, 4.47e1], [-110.6, 44.7], [-110.6, 44.5]]], "type": "Polygon"}}"#,
        #"{"geometry":{"type":"Polygon","coordinates":[[[-110.6,45.5],[-110.4,45.5],[-110.4,45.7],[-110.6,45.7],[-110.6,45.5]]]},"id":42,"type":"Feature","properties":null,"extra":{"kept":[1,2]}}"#,
    ]

    static var body: String {
        "{\"type\": \"FeatureCollection\",\n \"features\": [\n  " + features.joined(separator: " ,\n  ") + "\n ]}\n"
    }

    /// The `fence` rows' feature texts by id.
    static func storedTexts(_ path: String) throws -> [String: String] {
        let db = try Database(path: path)
        defer { db.close() }
        let rows = try db.statement("SELECT id, feature FROM fence")
        var texts: [String: String] = [:]
        while try rows.step() { texts[rows.string(0)] = rows.string(1) }
        return texts
    }

    @Test func theStoredTextIsTheFeaturesOwnAndReadsBackAsTheSameFeature() throws {
        let folder = TemporaryFolder()
        let path = folder.path("fences.sqlite")
        func start() throws -> PerimeterServer {
            try PerimeterServer(configuration: ServerConfiguration(databasePath: path, address: "127.0.0.1", port: 0,
                                                                   threads: 1, drainTimeout: 2))
        }
        var given: [String: [UInt8]] = [:]
        do {
            let server = try start()
            defer { server.stop() }
            let client = try TestClient(port: server.port)
            let response = try client.request("POST", "/v1/fences", body: Array(Self.body.utf8))
            #expect(response.status == 200, "\(response.text)")
            #expect(response.text == #"{"imported":2}"#)
            for id in ["alpha", "42"] { given[id] = try client.request("GET", "/v1/fences/\(id)").body }
        }

        let stored = try Self.storedTexts(path)
        #expect(stored == ["alpha": Self.features[0], "42": Self.features[1]])

        // A restarted server reads the features from those texts: each answers as before the restart.
        let server = try start()
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        for (id, before) in given {
            let after = try client.request("GET", "/v1/fences/\(id)")
            #expect(after.status == 200)
            #expect(after.body == before, "\(id): \(after.text)")
        }
        #expect(T.parse(given["alpha"] ?? [])["properties"]?["name"] == "café 😀")
    }

    @Test func theReaderSaysWhereEachKeptFeatureIs() {
        let body = Array(Self.body.utf8)
        let result = GeoJSONReader().read(body)
        #expect(!result.hasErrors)
        #expect(result.featureByteRanges.map { String(decoding: body[$0], as: UTF8.self) } == Self.features)

        // A feature with an error is left out, and so is its range.
        let withBad = Array(#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1]},"properties":{}}, \#(Self.features[1])]}"#.utf8)
        let partial = GeoJSONReader().read(withBad)
        #expect(partial.featureIndices == [1])
        #expect(partial.featureByteRanges.map { String(decoding: withBad[$0], as: UTF8.self) } == [Self.features[1]])
        #expect(GeoJSONReader().read(Array(Self.features[1].utf8)).featureByteRanges.isEmpty, "a lone Feature")
    }
}
