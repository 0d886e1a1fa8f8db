import Foundation
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterTestSupport
import Testing

/// Loads `json` (a FeatureCollection's features, given as JSON text) into fences.
private func load(_ features: String, options: FenceLoader.Options = .init()) -> FenceLoader.Result {
    let text = #"{"type":"FeatureCollection","features":["# + features + "]}"
    let read = GeoJSONReader().read(Array(text.utf8))
    guard let object = read.object else {
        Issue.record("test input does not parse: \(read.problems)")
        return FenceLoader.Result(fences: [], problems: [])
    }
    return FenceLoader(options: options).load(object)
}

private let square = #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}"#
private let point = #"{"type":"Point","coordinates":[7.44,46.95]}"#

@Suite("Fence loading")
struct FenceLoaderTests {
    @Test("Mapbox keys: dwell time in minutes, point radius in metres")
    func mapboxKeys() throws {
        let result = load(#"{"type":"Feature","id":"a","properties":{"name":"A","MBX_GEOFENCE_DWELL_TIME":2,"MBX_GEOFENCE_POINT_RADIUS":150},"geometry":"# + point + "}")
        #expect(result.problems.isEmpty)
        let fence = try #require(result.fences.first)
        #expect(fence.dwellTime == 120)
        #expect(fence.name == "A")
        #expect(fence.region.shape == .circle(center: Coordinate(latitude: 46.95, longitude: 7.44), radius: 150))
    }

    @Test("Perimeter keys: dwell seconds (winning over Mapbox's, with a warning), buffer, events, group, message, expiry")
    func perimeterKeys() throws {
        let result = load(#"""
        {"type":"Feature","id":7,"properties":{"perimeter:dwell":30,"MBX_GEOFENCE_DWELL_TIME":5,"perimeter:buffer":25,
         "perimeter:events":["entry","EXIT"],"perimeter:group":"north","perimeter:message":"Entered {name}",
         "perimeter:expires":"2026-01-31T18:00:00Z"},"geometry":
        """# + square + "}")
        let fence = try #require(result.fences.first)
        #expect(fence.id == "7")
        #expect(fence.dwellTime == 30)
        #expect(fence.region.buffer == 25)
        #expect(fence.events == [.entry, .exit])
        #expect(fence.group == "north")
        #expect(fence.message?.render { $0 == "name" ? "Lake" : nil } == "Entered Lake")
        #expect(fence.expiresAt == RFC3339.date(from: "2026-01-31T18:00:00Z"))
        #expect(result.problems.map(\.severity) == [.warning])
        #expect(result.problems.first?.path.description == "$.features[0].properties.MBX_GEOFENCE_DWELL_TIME")
    }

    /// Features whose properties hold no setting key skip the key lookups: every key a setting reads must
    /// be recognised, and such features must load exactly as with no properties at all.
    @Test("properties without setting keys give the defaults; every setting key is recognised")
    func propertiesWithoutSettings() throws {
        let keys = [FenceProperties.mapboxDwellTime, FenceProperties.mapboxPointRadius, FenceProperties.dwell,
                    FenceProperties.radius, FenceProperties.buffer, FenceProperties.events, FenceProperties.group,
                    FenceProperties.message, FenceProperties.expires, FenceProperties.name, FenceProperties.accuracy,
                    FenceProperties.hysteresis, FenceProperties.maximumAccuracy, FenceProperties.entryDelay,
                    FenceProperties.exitDelay, FenceProperties.crossings, FenceProperties.interpolate,
                    FenceProperties.maximumGap, FenceProperties.initialTrigger, FenceProperties.dwellEvery,
                    FenceProperties.staleAfter, FenceProperties.exitOnStale, FenceProperties.schedule]
        for key in keys { #expect(FenceProperties.isSetting(key), "\(key)") }
        for key in ["id", "kind", "Name", "perimeter", "MBX_OTHER", "nverts", ""] { #expect(!FenceProperties.isSetting(key), "\(key)") }

        let options = FenceLoader.Options(defaultRadius: 120)
        for geometry in [square, point] {
            let bare = load(#"{"type":"Feature","id":"a","properties":{},"geometry":"# + geometry + "}", options: options)
            let other = load(#"{"type":"Feature","id":"a","properties":{"id":0,"kind":"small","nverts":200},"geometry":"# + geometry + "}",
                             options: options)
            let a = try #require(bare.fences.first), b = try #require(other.fences.first)
            #expect(a.region == b.region && a.name == b.name && a.dwellTime == b.dwellTime && a.group == b.group)
            #expect(a.events == b.events && a.expiresAt == b.expiresAt && a.options == b.options)
            #expect(bare.problems.map(\.message) == other.problems.map(\.message))
        }
        // One setting among other keys is still read.
        let named = load(#"{"type":"Feature","id":"a","properties":{"kind":"x","name":"Park","zz":1},"geometry":"# + square + "}")
        #expect(named.fences.first?.name == "Park")
    }

    @Test("events may be one comma-separated string")
    func eventsAsString() throws {
        let result = load(#"{"type":"Feature","id":"a","properties":{"perimeter:events":"dwell, exit"},"geometry":"# + square + "}")
        #expect(try #require(result.fences.first).events == [.dwell, .exit])
    }

    @Test("an integer id is kept exactly, not rounded through Double")
    func exactIntegerID() throws {
        let result = load(#"{"type":"Feature","id":9007199254740993,"properties":{},"geometry":"# + square + "}")
        #expect(try #require(result.fences.first).id == "9007199254740993")
    }

    @Test("a Point without a radius is an error naming feature, id and path; a default radius fixes it")
    func pointNeedsRadius() throws {
        let result = load(#"{"type":"Feature","id":"ok","properties":{},"geometry":"# + square + #"},{"type":"Feature","id":"p","properties":{},"geometry":"# + point + "}")
        #expect(result.fences.map(\.id) == ["ok"])
        let problem = try #require(result.problems.first)
        #expect(problem.severity == .error)
        #expect(problem.featureIndex == 1)
        #expect(problem.featureID == "p")
        #expect(problem.path.description == "$.features[1].geometry")
        #expect(problem.message.contains("radius"))
        #expect("\(problem)".hasPrefix("error: feature 1 (id \"p\") at $.features[1].geometry:"))

        let fixed = load(#"{"type":"Feature","id":"p","properties":{},"geometry":"# + point + "}", options: .init(defaultRadius: 50))
        #expect(fixed.fences.first?.region.shape == .circle(center: Coordinate(latitude: 46.95, longitude: 7.44), radius: 50))
        // Relying on the default is said: a missing radius is often an oversight.
        #expect(fixed.problems.map(\.severity) == [.warning])
        #expect("\(fixed.problems[0])".hasPrefix("warning: feature 0 (id \"p\") at $.features[0].geometry: Point fence sets no radius"))
        #expect(fixed.problems[0].message.hasSuffix("it gets the default radius of 50 m"))
        let own = load(#"{"type":"Feature","id":"p","properties":{"MBX_GEOFENCE_POINT_RADIUS":80},"geometry":"# + point + "}",
                       options: .init(defaultRadius: 50))
        #expect(own.problems.isEmpty)
        #expect(own.fences.first?.region.shape == .circle(center: Coordinate(latitude: 46.95, longitude: 7.44), radius: 80))
        let strict = load(#"{"type":"Feature","id":"p","properties":{},"geometry":"# + point + "}", options: .init(defaultRadius: 50, strict: true))
        #expect(strict.fences.isEmpty && strict.problems.map(\.severity) == [.error])
    }

    @Test("lines become corridors, multipoints become several circles")
    func corridorsAndMultipoints() throws {
        let result = load(#"""
        {"type":"Feature","id":"trail","properties":{"perimeter:radius":30},"geometry":{"type":"LineString","coordinates":[[0,0],[0.01,0.01]]}},
        {"type":"Feature","id":"stops","properties":{"perimeter:radius":20},"geometry":{"type":"MultiPoint","coordinates":[[0,0],[1,1]]}}
        """#)
        #expect(result.problems.isEmpty)
        #expect(result.fences[0].region.shape == .corridor(lines: [[Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0.01, longitude: 0.01)]], radius: 30))
        #expect(result.fences[1].region.shape == .corridor(lines: [[Coordinate(latitude: 0, longitude: 0)], [Coordinate(latitude: 1, longitude: 1)]], radius: 20))
    }

    @Test("duplicate ids: the second feature is an error and skipped")
    func duplicateIDs() throws {
        let result = load(#"{"type":"Feature","id":"a","properties":{},"geometry":"# + square + #"},{"type":"Feature","id":"a","properties":{},"geometry":"# + square + "}")
        #expect(result.fences.count == 1)
        let problem = try #require(result.problems.first)
        #expect(problem.severity == .error && problem.featureIndex == 1)
        #expect(problem.message.contains("duplicate fence id \"a\" (first used by feature 0)"))
    }

    @Test("bad property values are errors at their JSON path", arguments: [
        (#""perimeter:dwell":-5"#, "$.features[0].properties['perimeter:dwell']"),
        (#""MBX_GEOFENCE_DWELL_TIME":"soon""#, "$.features[0].properties.MBX_GEOFENCE_DWELL_TIME"),
        (#""perimeter:buffer":[1]"#, "$.features[0].properties['perimeter:buffer']"),
        (#""perimeter:events":["entry","enter"]"#, "$.features[0].properties['perimeter:events'][1]"),
        (#""perimeter:expires":"tomorrow""#, "$.features[0].properties['perimeter:expires']"),
        (#""perimeter:message":42"#, "$.features[0].properties['perimeter:message']"),
        (#""perimeter:group":{"a":1}"#, "$.features[0].properties['perimeter:group']"),
    ])
    func badPropertyValues(property: String, path: String) throws {
        let result = load(#"{"type":"Feature","id":"a","properties":{"# + property + #"},"geometry":"# + square + "}")
        #expect(result.fences.isEmpty)
        let problem = try #require(result.problems.first)
        #expect(problem.severity == .error)
        #expect(problem.path.description == path)
    }

    @Test("a GeometryCollection of polygons is one area; with other members it is an error")
    func geometryCollections() throws {
        let good = load(#"{"type":"Feature","id":"gc","properties":{},"geometry":{"type":"GeometryCollection","geometries":["# + square + "," + square + "]}}")
        #expect(good.problems.isEmpty)
        guard case .polygons(let polygons)? = good.fences.first?.region.shape else {
            Issue.record("expected polygons")
            return
        }
        #expect(polygons.count == 2)
        let bad = load(#"{"type":"Feature","id":"gc","properties":{},"geometry":{"type":"GeometryCollection","geometries":["# + square + "," + point + "]}}")
        #expect(bad.fences.isEmpty)
        #expect(bad.problems.first?.path.description == "$.features[0].geometry.geometries[1]")
    }

    @Test("a self-intersecting ring is a warning (used with even-odd); --strict makes it an error")
    func selfIntersection() throws {
        let bowtie = #"{"type":"Feature","id":"bow","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}}"#
        let lenient = load(bowtie)
        #expect(lenient.fences.count == 1)
        #expect(lenient.problems.map(\.severity) == [.warning])
        #expect(lenient.problems.first?.message.contains("intersects itself") == true)
        let strict = load(bowtie, options: .init(strict: true))
        #expect(strict.fences.isEmpty)
        #expect(strict.problems.map(\.severity) == [.error])
    }

    @Test("repeated positions and simple rings raise no warning")
    func simpleRings() {
        let result = load(#"{"type":"Feature","id":"r","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,0],[1,1],[0,1],[0,0]],[[0.2,0.2],[0.2,0.4],[0.4,0.4],[0.4,0.2],[0.2,0.2]]]}}"#)
        #expect(result.problems.isEmpty)
    }

    /// Geometry the reader would refuse, given as a model, so that the loader's own checks report it:
    /// each problem at the path of the polygon or ring it is about.
    @Test("ring and coordinate problems are reported at their JSON paths", arguments: [
        ("polygon with no rings", GeoJSON.Geometry.polygon(GeoJSON.Polygon([])), "$.features[1].geometry.coordinates", "polygon has no rings"),
        ("short hole", .polygon(GeoJSON.Polygon([ring, Array(ring.prefix(3))])), "$.features[1].geometry.coordinates[1]", "ring has 3 positions"),
        ("open ring in the second polygon", .multiPolygon(GeoJSON.MultiPolygon([[ring], [ring, Array(ring.dropLast())]])),
         "$.features[1].geometry.coordinates[1][1]", "not closed"),
        ("open ring", .polygon(GeoJSON.Polygon([ring + [P(longitude: 0, latitude: 0.5)]])), "$.features[1].geometry.coordinates[0]", "not closed"),
        ("not on Earth", .polygon(GeoJSON.Polygon([[P(longitude: 0, latitude: 0), P(longitude: 1, latitude: 95), P(longitude: 1, latitude: 1), P(longitude: 0, latitude: 0)]])),
         "$.features[1].geometry.coordinates", "is not on Earth"),
    ])
    func ringProblemPaths(what: String, geometry: GeoJSON.Geometry, path: String, message: String) throws {
        let features = [GeoJSON.Feature(id: .string("fine"), geometry: .polygon(GeoJSON.Polygon([Self.ring]))),
                        GeoJSON.Feature(id: .string("bad"), geometry: geometry)]
        let result = FenceLoader().load(.featureCollection(GeoJSON.FeatureCollection(features)))
        #expect(result.fences.map(\.id) == ["fine"], "\(what)")
        let problem = try #require(result.problems.first, "\(what)")
        #expect(result.problems.count == 1 && problem.severity == .error, "\(what): \(result.problems)")
        #expect(problem.path.description == path, "\(what)")
        #expect(problem.message.contains(message), "\(what): \(problem.message)")
    }

    typealias P = GeoJSON.Position
    static let ring = [P(longitude: 0, latitude: 0), P(longitude: 1, latitude: 0), P(longitude: 1, latitude: 1),
                       P(longitude: 0, latitude: 1), P(longitude: 0, latitude: 0)]

    @Test("after the reader leaves out a bad feature, problems still name features by their input position")
    func inputPositions() throws {
        let text = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"bad","properties":{},"geometry":{"type":"Point","coordinates":[0,"x"]}},{"type":"Feature","id":"bow","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}}]}"#
        let read = GeoJSONReader().read(Array(text.utf8))
        #expect(read.featureIndices == [1])
        let result = FenceLoader().load(read)
        let warning = try #require(result.problems.first)
        #expect(warning.featureIndex == 1)
        #expect(warning.path.description == "$.features[1].geometry.coordinates")
    }

    @Test("a feature without an id gets one, with a warning")
    func missingID() throws {
        let result = load(#"{"type":"Feature","properties":{},"geometry":"# + square + "}")
        #expect(try #require(result.fences.first).id == "feature-0")
        #expect(result.problems.map(\.severity) == [.warning])
    }

    @Test("a feature without geometry is an error")
    func nullGeometry() {
        let result = load(#"{"type":"Feature","id":"n","properties":{},"geometry":null}"#)
        #expect(result.fences.isEmpty)
        #expect(result.problems.first?.severity == .error)
    }

    @Test("the Yellowstone tutorial fences load: 8 named polygons", .enabled(if: Fixtures.available))
    func yellowstone() throws {
        let read = GeoJSONReader().read([UInt8](try Fixtures.data("yellowstone/yellowstone.geojson")))
        let result = FenceLoader().load(try #require(read.object))
        #expect(result.problems.isEmpty)
        #expect(result.fences.count == 8)
        #expect(result.fences.first { $0.id == "hayden-valley" }?.name == "Hayden Valley")
    }

    @Test("the shared real polygon sets load without errors", .enabled(if: Fixtures.available), arguments: [
        "chicago_community_areas", "montreal_election_districts", "naturalearth_lowres_countries",
        "nyc_boroughs", "pittsburgh_neighborhoods", "polygon_holes", "virginia_counties",
    ])
    func realPolygons(name: String) throws {
        let read = GeoJSONReader().read([UInt8](try Fixtures.data("polygons/\(name).geojson")))
        #expect(!read.hasErrors)
        let result = FenceLoader().load(try #require(read.object))
        #expect(!result.hasErrors, "\(result.problems.prefix(3))")
        #expect(result.fences.count > 0)
    }
}

@Suite("Message templates")
struct MessageTemplateTests {
    @Test("placeholders, literal braces, unknown names and unclosed braces")
    func rendering() {
        let values = ["name": "Lake", "event": "entry"]
        #expect(MessageTemplate("Entered {name}").render { values[$0] } == "Entered Lake")
        #expect(MessageTemplate("{event}: {{ {name} }}").render { values[$0] } == "entry: { Lake }")
        #expect(MessageTemplate("{unknown}!").render { values[$0] } == "!")
        #expect(MessageTemplate("open { brace").render { values[$0] } == "open { brace")
        #expect(MessageTemplate("{ name }").placeholders == ["name"])
    }
}
