import Testing
@testable import PerimeterGeoJSON

/// One malformed input and the first problem the reader must report for it.
struct MalformedCase: CustomTestStringConvertible, Sendable {
    var name: String
    var input: String
    var severity: GeoJSONProblem.Severity
    var message: String
    var path: String
    var line: Int
    var column: Int
    var featureIndex: Int?
    var problems: Int
    /// Features loaded (`nil`: no object at all).
    var loaded: Int?

    init(_ name: String, _ input: String, _ severity: GeoJSONProblem.Severity, _ message: String, path: String, line: Int,
         column: Int, featureIndex: Int?, problems: Int, loaded: Int?) {
        (self.name, self.input, self.severity, self.message, self.path) = (name, input, severity, message, path)
        (self.line, self.column, self.featureIndex, self.problems, self.loaded) = (line, column, featureIndex, problems, loaded)
    }

    var testDescription: String { name }

    /// The bytes: `G…` wraps a geometry in a one-feature collection (id "f"), `\\n` is a newline,
    /// `DEEP` is 300 `[`, `\\xff` is the byte 0xFF.
    var bytes: [UInt8] {
        var text = input
        if text.hasPrefix("G") { text = inCollection(String(text.dropFirst())) }
        text = text.split(separator: "\\n", omittingEmptySubsequences: false).joined(separator: "\n")
        text = text.split(separator: "DEEP", omittingEmptySubsequences: false)
            .joined(separator: String(repeating: "[", count: 300))
        var bytes = Array(text.utf8)
        if let k = bytes.indices.first(where: { bytes[$0...].starts(with: Array("\\xff".utf8)) }) {
            bytes.replaceSubrange(k..<(k + 4), with: [0xFF])
        }
        return bytes
    }
}

@Suite struct MalformedInputTests {
    static let cases: [MalformedCase] = [
        MalformedCase("syntax-truncated", #"{"type":"FeatureCollection","features":[{"type":"Feature""#,
                      .error, "expected ',' or '}' in object, found end of input",
                      path: "$.features[0]", line: 1, column: 58, featureIndex: 0, problems: 1, loaded: nil),
        MalformedCase("syntax-multiline", #"{"type":"FeatureCollection",\n "features":[\n  {"type":"Feature","geometry":null,"properties":{"a":1,}}\n]}"#,
                      .error, "expected a member name (string) in object, found unexpected character '}'",
                      path: "$.features[0].properties", line: 3, column: 57, featureIndex: 0, problems: 1, loaded: nil),
        MalformedCase("not-object", #"[1,2]"#,
                      .error, "expected a GeoJSON object, found an array",
                      path: "$", line: 1, column: 1, featureIndex: nil, problems: 1, loaded: nil),
        MalformedCase("no-type", #"{"coordinates":[1,2]}"#,
                      .error, "GeoJSON object has no \"type\" member",
                      path: "$", line: 1, column: 1, featureIndex: nil, problems: 1, loaded: nil),
        MalformedCase("type-not-string", #"{"type":7}"#,
                      .error, "\"type\" must be a string, found a number",
                      path: "$.type", line: 1, column: 1, featureIndex: nil, problems: 1, loaded: nil),
        MalformedCase("unknown-top-type", #"{"type":"Topology"}"#,
                      .error, "unknown GeoJSON type \"Topology\"",
                      path: "$.type", line: 1, column: 1, featureIndex: nil, problems: 1, loaded: nil),
        MalformedCase("unknown-geometry", #"G{"type":"Circle","coordinates":[0,0]}"#,
                      .error, "unknown geometry type \"Circle\"",
                      path: "$.features[0].geometry.type", line: 1, column: 95, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("missing-coordinates", #"G{"type":"Point"}"#,
                      .error, "Point has no \"coordinates\" member",
                      path: "$.features[0].geometry", line: 1, column: 95, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("coordinates-string", #"G{"type":"Point","coordinates":"0,0"}"#,
                      .error, "expected a position (array of numbers), found a string",
                      path: "$.features[0].geometry.coordinates", line: 1, column: 125, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("coordinate-string", #"G{"type":"Point","coordinates":[0,"1"]}"#,
                      .error, "coordinate must be a number, found a string",
                      path: "$.features[0].geometry.coordinates[1]", line: 1, column: 128, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("coordinate-null", #"G{"type":"LineString","coordinates":[[0,0],[1,null]]}"#,
                      .error, "coordinate must be a number, found null",
                      path: "$.features[0].geometry.coordinates[1][1]", line: 1, column: 140, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("position-short", #"G{"type":"MultiPoint","coordinates":[[0,0],[1]]}"#,
                      .error, "a position needs at least 2 numbers (longitude, latitude), found 1",
                      path: "$.features[0].geometry.coordinates[1]", line: 1, column: 137, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("position-empty", #"G{"type":"Point","coordinates":[]}"#,
                      .error, "a position needs at least 2 numbers (longitude, latitude), found 0",
                      path: "$.features[0].geometry.coordinates", line: 1, column: 125, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("position-extra", #"G{"type":"Point","coordinates":[1,2,3,4]}"#,
                      .warning, "position has 4 numbers; only longitude, latitude and altitude are kept",
                      path: "$.features[0].geometry.coordinates", line: 1, column: 125, featureIndex: 0, problems: 1, loaded: 1),
        MalformedCase("latitude-range", #"G{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,95],[0,0]]]}"#,
                      .error, "latitude 95.0 is outside -90...90",
                      path: "$.features[0].geometry.coordinates[0][2][1]", line: 1, column: 144, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("longitude-error", #"G{"type":"Point","coordinates":[-600,0]}"#,
                      .error, "longitude -600.0 is outside -540...540",
                      path: "$.features[0].geometry.coordinates[0]", line: 1, column: 126, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("longitude-warning", #"G{"type":"Point","coordinates":[181,0]}"#,
                      .warning, "longitude 181.0 is outside -180...180 (RFC 7946); kept as written",
                      path: "$.features[0].geometry.coordinates[0]", line: 1, column: 126, featureIndex: 0, problems: 1, loaded: 1),
        MalformedCase("infinite", #"G{"type":"Point","coordinates":[1e999,0]}"#,
                      .error, "coordinate is not a finite number",
                      path: "$.features[0].geometry.coordinates[0]", line: 1, column: 126, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("line-short", #"G{"type":"LineString","coordinates":[[0,0]]}"#,
                      .error, "a LineString needs at least 2 positions, found 1",
                      path: "$.features[0].geometry.coordinates", line: 1, column: 130, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("multiline-short", #"G{"type":"MultiLineString","coordinates":[[[0,0],[1,1]],[]]}"#,
                      .error, "a LineString needs at least 2 positions, found 0",
                      path: "$.features[0].geometry.coordinates[1]", line: 1, column: 150, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("ring-short", #"G{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,0]]]}"#,
                      .error, "a linear ring needs at least 4 positions, found 3",
                      path: "$.features[0].geometry.coordinates[0]", line: 1, column: 128, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("ring-open", #"G{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[0,0],[1,0],[1,1],[0,1]]]]}"#,
                      .error, "linear ring is not closed: its last position differs from its first",
                      path: "$.features[0].geometry.coordinates[1][0][3]", line: 1, column: 181, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("ring-not-array", #"G{"type":"Polygon","coordinates":[[0,0],[1,0],[1,1],[0,0]]}"#,
                      .error, "expected a position (array of numbers), found a number",
                      path: "$.features[0].geometry.coordinates[0][0]", line: 1, column: 129, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("polygon-depth", #"G{"type":"MultiPolygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}"#,
                      .error, "expected a position (array of numbers), found a number",
                      path: "$.features[0].geometry.coordinates[0][0][0]", line: 1, column: 135, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("bbox-short", #"G{"type":"Point","coordinates":[0,0],"bbox":[0,0,1]}"#,
                      .error, "bbox must be an array of 4 or 6 numbers",
                      path: "$.features[0].geometry.bbox", line: 1, column: 138, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("bbox-string", #"G{"type":"Point","coordinates":[0,0],"bbox":"x"}"#,
                      .error, "bbox must be an array of 4 or 6 numbers",
                      path: "$.features[0].geometry.bbox", line: 1, column: 138, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("gc-member", #"G{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[0,0]},{"type":"Point","coordinates":[0,99]}]}"#,
                      .error, "latitude 99.0 is outside -90...90",
                      path: "$.features[0].geometry.geometries[1].coordinates[1]", line: 1, column: 208, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("gc-not-object", #"G{"type":"GeometryCollection","geometries":[5]}"#,
                      .error, "expected a geometry object, found a number",
                      path: "$.features[0].geometry.geometries[0]", line: 1, column: 138, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("gc-missing", #"G{"type":"GeometryCollection"}"#,
                      .error, "GeometryCollection has no \"geometries\" member",
                      path: "$.features[0].geometry", line: 1, column: 95, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("geometry-wrong-type", #"G[0,0]"#,
                      .error, "\"geometry\" must be an object or null, found an array",
                      path: "$.features[0].geometry", line: 1, column: 95, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("id-wrong-type", #"{"type":"FeatureCollection","features":[{"type":"Feature","id":[1],"geometry":null,"properties":{}}]}"#,
                      .error, "feature id must be a string or a number, found an array",
                      path: "$.features[0].id", line: 1, column: 64, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("properties-wrong-type", #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":"p"}]}"#,
                      .error, "\"properties\" must be an object or null, found a string",
                      path: "$.features[0].properties", line: 1, column: 88, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("feature-not-object", #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":null,"properties":{}},42]}"#,
                      .error, "expected a Feature object, found a number",
                      path: "$.features[1]", line: 1, column: 92, featureIndex: 1, problems: 1, loaded: 1),
        MalformedCase("feature-wrong-type", #"{"type":"FeatureCollection","features":[{"type":"Point","coordinates":[0,0]}]}"#,
                      .error, "expected type \"Feature\", found \"Point\"",
                      path: "$.features[0]", line: 1, column: 41, featureIndex: 0, problems: 1, loaded: 0),
        MalformedCase("features-missing", #"{"type":"FeatureCollection"}"#,
                      .error, "FeatureCollection has no \"features\" member",
                      path: "$", line: 1, column: 1, featureIndex: nil, problems: 1, loaded: 0),
        MalformedCase("features-not-array", #"{"type":"FeatureCollection","features":null}"#,
                      .error, "\"features\" must be an array, found null",
                      path: "$.features", line: 1, column: 40, featureIndex: nil, problems: 1, loaded: 0),
        MalformedCase("depth", #"{"type":"Feature","geometry":null,"properties":{"a":DEEP}}"#,
                      .error, "nesting deeper than 256 levels",
                      path: "$.properties", line: 1, column: 307, featureIndex: 0, problems: 1, loaded: nil),
        MalformedCase("invalid-utf8", #"{"type":"Feature","geometry":null,"properties":{"a":"\xff"}}"#,
                      .error, "invalid UTF-8 in string",
                      path: "$.properties", line: 1, column: 54, featureIndex: 0, problems: 1, loaded: nil),
        MalformedCase("trailing", #"{"type":"Point","coordinates":[0,0]} x"#,
                      .error, "expected end of input after the GeoJSON object, found unexpected character 'x'",
                      path: "$", line: 1, column: 38, featureIndex: nil, problems: 1, loaded: nil),
        MalformedCase("empty", #""#,
                      .error, "expected a GeoJSON object, found end of input",
                      path: "$", line: 1, column: 1, featureIndex: nil, problems: 1, loaded: nil),
        MalformedCase("id-after-geometry", #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[0,-91]},"id":77,"properties":{}}]}"#,
                      .error, "latitude -91.0 is outside -90...90",
                      path: "$.features[0].geometry.coordinates[1]", line: 1, column: 103, featureIndex: 0, problems: 1, loaded: 0),
    ]

    @Test(arguments: cases)
    func reportsTheProblemPrecisely(_ c: MalformedCase) throws {
        let result = GeoJSONReader().read(c.bytes)
        let first = try #require(result.problems.first)
        #expect(first.severity == c.severity)
        #expect(first.message == c.message)
        #expect(first.path.description == c.path)
        #expect(first.line == c.line)
        #expect(first.column == c.column)
        #expect(first.featureIndex == c.featureIndex)
        #expect(result.problems.count == c.problems)
        #expect(result.object?.features.count == c.loaded)
        if c.input.hasPrefix("G") && c.severity == .error { #expect(first.featureID == .string("f")) }
    }

    @Test func catalogueIsLargeEnough() {
        #expect(Self.cases.count >= 30)
        #expect(Set(Self.cases.map(\.message)).count >= 30)
    }

    @Test func goodFeaturesStillLoadBesideBadOnes() {
        let text = """
            {"type":"FeatureCollection","features":[
            {"type":"Feature","id":1,"geometry":{"type":"Point","coordinates":[0,0]},"properties":{}},
            {"type":"Feature","id":2,"geometry":{"type":"Point","coordinates":[0,"x"]},"properties":{}},
            {"type":"Feature","id":3,"geometry":{"type":"Point","coordinates":[1,1]},"properties":{}}
            ]}
            """
        let result = fastRead(text)
        #expect(result.object?.features.map(\.id) == [.integer(1), .integer(3)])
        #expect(result.problems.count == 1)
        #expect(result.problems.first?.featureID == .integer(2))
        #expect(result.problems.first?.featureIndex == 1)
        #expect(result.problems.first?.line == 3)
        #expect(result.problems.first?.description ==
            "3:70: error: coordinate must be a number, found a string (at $.features[1].geometry.coordinates[1], feature 1 id 2)")
    }

    @Test func problemListIsCapped() {
        let bad = #"{"type":"Feature","geometry":{"type":"Point","coordinates":[0,"x"]},"properties":{}}"#
        let text = #"{"type":"FeatureCollection","features":["# + Array(repeating: bad, count: 50).joined(separator: ",") + "]}"
        let result = GeoJSONReader(options: .init(maxProblems: 10)).read(Array(text.utf8))
        #expect(result.problems.count == 11)
        #expect(result.problems.last?.message == "40 more problems not listed")
    }
}
