import Foundation
import Testing
import PerimeterEngine
import PerimeterTestSupport
@testable import PerimeterTracks

/// The 1-based line and byte column of the first occurrence of `marker` in `text` (found by plain string search).
private func position(of marker: String, in text: String) -> (line: Int, column: Int)? {
    guard let range = text.range(of: marker) else { return nil }
    let before = Array(text[..<range.lowerBound].utf8)
    let line = before.filter { $0 == 0x0A }.count + 1
    let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
    return (line, before.count - lineStart + 1)
}

@Suite struct JSONPositionTests {
    @Test(arguments: [
        ("{\"t\":1,\"lat\":1,\"lon\":2}\n{\"t\":2 @x}\n", "@"),
        ("\n{\"t\":1,\"lat\":1,\"lon\":2}\n  {\"t\":2, \"lat\": @+1}\n", "@"),
        ("{\"t\":1,\"lat\":1,\"lon\":2}\r\n{\"t\":\"é\", \"lat\":1,, \"lon\":2}\r\n", ", \"lon\""),
    ])
    func ndjsonSyntaxErrorsNameLineAndColumn(_ text: String, _ marker: String) throws {
        let content = text.replacingOccurrences(of: "@", with: "")
        let result = try TrackReader(format: .ndjson).read(Array(content.utf8), source: "a.ndjson")
        let warning = try #require(result.warnings.first)
        let expected = try #require(position(of: marker, in: text))
        #expect(warning.message.hasPrefix("the line is not valid JSON ("), "\(warning)")
        #expect(warning.line == expected.line && warning.column == expected.column, "\(warning)")
    }

    @Test func ndjsonNonObjectLineNamesItsColumn() throws {
        let content = "{\"t\":1,\"lat\":1,\"lon\":2}\n   [1, 2]\n"
        let warning = try #require(try TrackReader(format: .ndjson).read(Array(content.utf8), source: "a.ndjson").warnings.first)
        #expect(warning.message.contains("not an object"))
        #expect(warning.line == 2 && warning.column == 4)
        #expect(warning.description == "a.ndjson:2:4: the line is JSON but not an object; line skipped")
    }

    @Test func ndjsonThrownProblemKeepsThePosition() throws {
        let content = "\n {\"t\": tru}\n"
        let error = try #require(throws: TrackProblem.self) { try TrackReader(format: .ndjson).read(Array(content.utf8), source: "a.ndjson") }
        #expect(error.message.hasPrefix("not NDJSON: the line is not valid JSON"))
        #expect(error.line == 2 && error.column == 8, "\(error)")
    }

    @Test(arguments: [
        "{\n  \"type\": \"LineString\",\n  \"coordinates\": [[0, 0] @[1, 1]]\n}",
        "{\"type\": \"Feature\",\n\"properties\": {\"times\": [1, 2]},\n\"geometry\": {\"type\": \"LineString\", \"coordinates\": [[0, 0], [1, 1]]}\n,@}",
        "\u{FEFF}{\"type\": @'Point'}",
        "{\"type\": \"Point\", \"coordinates\": [1, 2], \"name\": \"caf\u{E9}@\u{1}\"}",
    ])
    func geojsonSyntaxErrorsNameLineAndColumn(_ text: String) throws {
        let content = text.replacingOccurrences(of: "@", with: "")
        let error = try #require(throws: TrackProblem.self) { try TrackReader().read(Array(content.utf8), source: "a.geojson") }
        let marker = try #require(position(of: "@", in: text))
        #expect(error.message.hasPrefix("not valid JSON: "), "\(error)")
        #expect(error.line == marker.line && error.column == marker.column, "\(error)")
    }

    /// Structural problems keep their JSON path and gain the position of the value concerned.
    @Test func geojsonStructuralProblemsNameLineAndColumn() throws {
        let text = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "properties": {"times": [1, 3]},
           "geometry": {"type": "LineString", "coordinates": [[0, 0], @A[1, true], [2, 2], @B[3, 95]]}},
          @C"not a feature",
          {"type": "Feature", "properties": {"id": "bus", "coordTimes": @D[1, 2]},
           "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1], [2, 2]]}},
          {"type": "Feature", "properties": {"t\\u0069mes": [1, @E"yesterday"]},
           "geometry": {"type": "MultiPoint", "coordinates": [[0, 0], [1, 1]]}},
          {"type": "Feature", "properties": {}, "geometry": @F{"type": "Polygon", "coordinates": []}},
          {"type": "Feature", "properties": {}, "geometry": {"type": "Point", "coordinates": [5, 5, 0, @G"soon"]}}
        ]}
        """
        var content = text
        for tag in ["A", "B", "C", "D", "E", "F", "G"] { content = content.replacingOccurrences(of: "@" + tag, with: "") }
        let result = try TrackReader().read(Array(content.utf8), source: "t.geojson")
        let expected: [(tag: String, message: String)] = [
            ("A", "features[0].geometry.coordinates[1] is not a position [lon, lat]; vertex skipped"),
            ("B", "features[0].geometry.coordinates[3] has latitude 95.0, longitude 3.0: outside"),
            ("C", "features[1] is not an object; skipped"),
            ("D", "features[2].geometry has 3 vertices but 2 times"),
            ("E", "features[3].geometry vertex 1: time \"yesterday\" is neither ISO 8601 nor an epoch number"),
            ("F", "features[4].geometry is a Polygon, not a line or point; skipped"),
            ("G", "features[5].geometry vertex 0: time \"soon\" is neither ISO 8601 nor an epoch number"),
        ]
        #expect(result.warnings.count == expected.count, "\(result.warnings)")
        for (warning, item) in zip(result.warnings, expected) {
            let place = try #require(position(of: "@" + item.tag, in: text))
            // Columns count bytes of the file, which has no markers: subtract the markers before it on its line.
            let markersBefore = text.split(separator: "\n", omittingEmptySubsequences: false)[place.line - 1]
                .components(separatedBy: "@" + item.tag)[0].components(separatedBy: "@").count - 1
            #expect(warning.message.contains(item.message), "\(warning)")
            #expect(warning.line == place.line && warning.column == place.column - 2 * markersBefore, "\(warning)")
        }
        #expect(result.updates.map(\.time.timeIntervalSince1970) == [1, 3, 1])
    }

    @Test func geojsonFatalStructuralProblemsNameTheLine() throws {
        let cases: [(String, String, Int?)] = [
            ("\n\n{\"type\":\n  \"Banana\"}", "unknown type \"Banana\"", 4),
            ("{\"type\": \"FeatureCollection\",\n \"features\": {}}", "FeatureCollection has no \"features\" array", 2),
            ("\n[1, 2]", "not GeoJSON: the top level is not an object", 2),
            ("{\"type\": \"Point\", \"coordinates\": [1, 2]}", "the track has no times", nil),
        ]
        for (content, message, line) in cases {
            let error = try #require(throws: TrackProblem.self) { try TrackReader(format: .geojson).read(Array(content.utf8), source: "a.geojson") }
            #expect(error.message.contains(message), "\(error)")
            #expect(error.line == line, "\(error)")
        }
    }
}

@Suite struct JSONValueTests {
    /// `true`/`false` are booleans, never the numbers 1 and 0; the numbers 1 and 0 stay numbers.
    @Test func booleansAreNotNumbers() throws {
        let content = """
        {"time": true, "lat": 1, "lon": 2}
        {"time": 1, "lat": false, "lon": 2}
        {"time": 1, "lat": 1, "lon": 0, "device": true}
        {"time": 1, "lat": 1, "lon": 0, "accuracy": false, "speed": true}
        {"time": 1, "lat": 1, "lon": 0, "accuracy": 1, "speed": 0}
        """
        let result = try TrackReader(device: "d").read(Array(content.utf8), source: "b.ndjson")
        #expect(result.warnings.map(\.line) == [1, 2, 3, 4, 4])
        #expect(result.warnings.map(\.message) == [
            "time true is neither ISO 8601 nor an epoch number; line skipped",
            "latitude false is not a number; line skipped",
            "device id true is not a string or number; line skipped",
            "accuracy false is not a number; accuracy ignored",
            "speed true is not a number; speed ignored",
        ])
        #expect(result.updates.count == 2)
        #expect(result.updates.map(\.horizontalAccuracy) == [nil, 1])
        #expect(result.updates.map(\.speed) == [nil, 0])
    }

    @Test func geojsonBooleansAreNotCoordinatesOrDevices() throws {
        let content = #"{"type":"Feature","properties":{"device":true,"times":[1,2]},"geometry":{"type":"LineString","coordinates":[[0,0],[false,1],[1,1]]}}"#
        let result = try TrackReader().read(Array(content.utf8), source: "g.geojson")
        #expect(result.updates.map(\.device) == ["g", "g"])
        #expect(result.warnings.count == 1)
        #expect(result.warnings.first?.message.contains("coordinates[1] is not a position") == true)
    }

    @Test func integersStayExact() throws {
        let content = """
        {"id": 9007199254740993, "t": 1577836800123, "lat": 1, "lon": 2}
        {"id": -12345678901234567, "t": 1577836800123457, "lat": 1, "lon": 2}
        """
        let result = try TrackReader().read(Array(content.utf8), source: "i.ndjson")
        #expect(result.updates.map(\.device) == ["9007199254740993", "-12345678901234567"])
        #expect(result.updates[0].time == Date(timeIntervalSinceReferenceDate: 599_529_600.123))
        #expect(result.updates[1].time == Date(timeIntervalSinceReferenceDate: 599_529_600.123457))
    }

    /// Integer epochs (seconds, milliseconds, microseconds) give the `Date` nearest to the exact instant:
    /// no neighbouring Double is closer (residuals computed exactly with a fused multiply-add).
    @Test func integerEpochsAreNearest() throws {
        var rng = SplitMix64(seed: 2024)
        for _ in 0..<3000 {
            let unit: Int64 = [1, 1_000, 1_000_000].randomElement(using: &rng)!
            let seconds = Int64.random(in: unit == 1 ? -99_999_999_999...99_999_999_999 : 100_000_000...4_000_000_000, using: &rng)
            let value = seconds * unit + (unit == 1 ? 0 : Int64.random(in: 0..<unit, using: &rng))
            let t = TrackTime.epoch(value).timeIntervalSinceReferenceDate
            let exact = Double(value - 978_307_200 * unit)   // exact: below 2^53 here
            func residual(_ x: Double) -> Double { abs((-exact).addingProduct(x, Double(unit))) }
            #expect(residual(t) <= residual(t.nextUp) && residual(t) <= residual(t.nextDown), "\(value)")
            // Through the text path (CSV, JSON strings) the same instant comes out.
            #expect(TrackTime.parse(" \(value) ") == TrackTime.epoch(value))
        }
    }
}
