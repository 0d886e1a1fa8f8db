import Foundation
import PerimeterTestSupport
import Testing

private let squareFences = #"""
{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"home","properties":{"name":"Home","perimeter:dwell":30},
  "geometry":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0.01],[0,0]]]}},
 {"type":"Feature","id":"shop","properties":{"name":"Shop","perimeter:message":"{device} is at the {name}"},
  "geometry":{"type":"Point","coordinates":[0.02,0.005]}}
]}
"""#

private let twoDevicesCSV = """
deviceId,time,lat,lon
a,2026-01-01T10:00:00Z,0.005,0.005
b,2026-01-01T10:00:10Z,0.005,-0.01
a,2026-01-01T10:01:00Z,0.005,0.02
b,2026-01-01T10:01:30Z,0.005,0.005
"""

@Suite("Command line")
struct CommandLineTests {
    @Test("replay merges devices by time, fires dwells between updates in time order, renders messages")
    func twoDevices() throws {
        let dir = try temporaryDirectory()
        let fences = try write(squareFences, to: "f.geojson", in: dir)
        let track = try write(twoDevicesCSV, to: "t.csv", in: dir)
        let run = perimeter("replay", "--fences", fences, "--track", track, "--radius", "200")
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.split(separator: "\n").map(String.init) == [
            "a: Entered Home at 10:00:00",
            "a: Dwelled in Home at 10:00:30",
            "a: Exited Home at 10:01:00 after 1 min",
            "a: Entered Shop at 10:01:00 — a is at the Shop",
            "b: Entered Home at 10:01:30",
        ])
    }

    @Test("with a message template, every text line still says which kind of event it is, then the message")
    func messagesKeepTheKind() throws {
        let dir = try temporaryDirectory()
        let fences = try write(#"""
            {"type":"Feature","id":"meadow","properties":{"name":"Meadow Section","perimeter:dwell":30,"perimeter:message":"{name} at {time}"},
             "geometry":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0.01],[0,0]]]}}
            """#, to: "m.geojson", in: dir)
        let track = try write("deviceId,time,lat,lon\nv,1970-01-01T00:00:00Z,0.005,0.005\nv,1970-01-01T00:01:05Z,0.005,0.02\n",
                              to: "m.csv", in: dir)
        let run = perimeter("replay", "--fences", fences, "--track", track)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.split(separator: "\n").map(String.init) == [
            "Entered Meadow Section at 00:00:00 — Meadow Section at 00:00:00",
            "Dwelled in Meadow Section at 00:00:30 — Meadow Section at 00:00:30",
            "Exited Meadow Section at 00:01:05 after 1 min 5 s — Meadow Section at 00:01:05",
        ])
    }

    @Test("replay --format ndjson prints the server's event JSON: sequence from 1, the fence's properties and message")
    func ndjsonCarriesPropertiesAndMessage() throws {
        let dir = try temporaryDirectory()
        let fences = try write(squareFences, to: "f.geojson", in: dir)
        let track = try write(twoDevicesCSV, to: "t.csv", in: dir)
        let run = perimeter("replay", "--fences", fences, "--track", track, "--radius", "200", "--format", "ndjson")
        #expect(run.status == 0, "\(run.error)")
        let objects = try run.output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.map { $0["sequence"] as? Int } == [1, 2, 3, 4, 5])
        #expect(objects.map { $0["type"] as? String } == ["entry", "dwell", "exit", "entry", "entry"])
        let shop = objects[3]
        #expect(shop["fenceId"] as? String == "shop" && shop["fenceName"] as? String == "Shop")
        #expect(shop["message"] as? String == "a is at the Shop")
        let properties = try #require(shop["properties"] as? [String: Any])
        #expect(properties["name"] as? String == "Shop" && properties["perimeter:message"] as? String == "{device} is at the {name}")
        #expect(objects[0]["message"] == nil, "no message without a template")
        #expect((objects[0]["properties"] as? [String: Any])?["perimeter:dwell"] as? Int == 30)
        #expect(objects[2]["reason"] as? String == "left" && objects[2]["observedAt"] is String)
    }

    @Test("usage errors: one line, exit status 64", arguments: [
        (["replay", "--fences", "x.geojson"], "at least one --track"),
        (["replay", "--track", "t.gpx"], "--fences FILE is required"),
        (["replay", "--fences", "f", "--track", "t", "--bogus"], "unknown option '--bogus'"),
        (["replay", "--fences", "f", "--track", "t", "--format", "xml"], "--format must be one of text, ndjson"),
        (["replay", "--fences", "f", "--track", "t", "--dwell", "-3"], "--dwell must be a number"),
        (["replay", "--fences", "f", "--track", "t", "--dwell"], "--dwell needs a value"),
        (["replay", "--fences", "f", "--fences", "g", "--track", "t"], "given 2 times"),
        (["validate"], "exactly one fence file"),
        (["frobnicate"], "unknown command 'frobnicate'"),
        (["demo", "--speed", "fast"], "--speed must be a number"),
    ])
    func usageErrors(arguments: [String], message: String) {
        let run = perimeter(arguments)
        #expect(run.status == 64)
        #expect(run.output.isEmpty)
        #expect(run.error.hasPrefix("perimeter: "))
        #expect(run.error.contains(message), "\(run.error)")
        #expect(run.error.filter { $0 == "\n" }.count == 1, "one line: \(run.error)")
    }

    @Test("missing files: one line naming the file, exit status 66")
    func missingFiles() throws {
        let dir = try temporaryDirectory()
        let fences = try write(squareFences, to: "f.geojson", in: dir)
        let noFences = perimeter("replay", "--fences", "/nonexistent/f.geojson", "--track", "t.gpx")
        #expect(noFences.status == 66)
        #expect(noFences.error == "perimeter: fence file '/nonexistent/f.geojson' does not exist\n")
        let noTrack = perimeter("replay", "--fences", fences, "--track", dir.appendingPathComponent("none.gpx").path, "--radius", "5")
        #expect(noTrack.status == 66)
        #expect(noTrack.error.contains("none.gpx' does not exist"))
        let directory = perimeter("validate", dir.path)
        #expect(directory.status == 66)
        #expect(directory.error.contains("is a directory"))
    }

    @Test("bad data: one line naming file and place, exit status 65", arguments: [
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"p","properties":{"perimeter:radius":-1},"geometry":{"type":"Point","coordinates":[0,0]}}]}"#, "perimeter:radius must be a positive number"),
        (#"{"type":"FeatureCollection","features":["#, "f.geojson:"),
        (#"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0.5]]]}}]}"#, "$.features[0].geometry.coordinates[0]"),
        ("", "f.geojson:"),
    ])
    func badFenceData(fences: String, message: String) throws {
        let dir = try temporaryDirectory()
        let fencePath = try write(fences, to: "f.geojson", in: dir)
        let track = try write(twoDevicesCSV, to: "t.csv", in: dir)
        let run = perimeter("replay", "--fences", fencePath, "--track", track)
        #expect(run.status == 65)
        #expect(run.error.contains(message), "\(run.error)")
        #expect(run.error.filter { $0 == "\n" }.count == 1, "one line: \(run.error)")
    }

    @Test("a Point without a radius gets 300 m, the service's default, in replay as in validate; both say so")
    func defaultRadius() throws {
        let dir = try temporaryDirectory()
        let fences = try write(squareFences, to: "f.geojson", in: dir)
        // 0.0025° east of the shop's centre is ≈ 278 m: inside 300 m, outside 200 m.
        let track = try write("deviceId,time,lat,lon\na,2026-01-01T10:00:00Z,0.005,0.0225\n", to: "t.csv", in: dir)
        let replay = perimeter("replay", "--fences", fences, "--track", track)
        #expect(replay.status == 0, "\(replay.error)")
        #expect(replay.output == "Entered Shop at 10:00:00 — a is at the Shop\n")
        #expect(replay.error.contains("1 warning (run 'perimeter validate"))
        #expect(perimeter("replay", "--fences", fences, "--track", track, "--radius", "200").output == "")
        let validate = perimeter("validate", fences)
        #expect(validate.status == 0)
        #expect(validate.output.contains("feature 1 (id \"shop\")") && validate.output.contains("default radius of 300 m"))
    }

    @Test("serve --config: a bad options file is one line naming the file and the member, exit status 65")
    func badOptionsFile() throws {
        let dir = try temporaryDirectory()
        let config = try write(#"{"defaultDwellTime": 60, "allowedLateness": "late"}"#, to: "options.json", in: dir)
        let run = perimeter("serve", "--port", "0", "--config", config)
        #expect(run.status == 65)
        #expect(run.error == "perimeter: serve: \(config): $.allowedLateness: must be a number ≥ 0 (seconds), not \"late\"\n")
        let missing = perimeter("serve", "--port", "0", "--config", dir.appendingPathComponent("none.json").path)
        #expect(missing.status == 66)
        #expect(missing.error.contains("none.json' does not exist"))
    }

    @Test("serve: the connection and stream limits are flags, explained by --help and checked")
    func serveLimitFlags() throws {
        let help = perimeter("serve", "--help")
        #expect(help.status == 0)
        for flag in ["--max-connections N", "--max-connections-per-address N", "--request-deadline SECONDS",
                     "--stream-buffer BYTES", "--stream-buffer-total BYTES"] {
            #expect(help.output.contains(flag), "\(flag) missing from serve --help")
        }
        let bad = perimeter("serve", "--port", "0", "--request-deadline", "-1")
        #expect(bad.status == 64)
        #expect(bad.error.contains("request-deadline"), "\(bad.error)")
    }

    @Test("serve --shards: explained by --help and checked")
    func serveShardsFlag() {
        let help = perimeter("serve", "--help")
        #expect(help.output.contains("--shards N"))
        let bad = perimeter("serve", "--port", "0", "--shards", "-2")
        #expect(bad.status == 64)
        #expect(bad.error.contains("shards"), "\(bad.error)")
    }

    @Test("a broken track: one line naming file and line, exit status 65")
    func badTrack() throws {
        let dir = try temporaryDirectory()
        let fences = try write(squareFences, to: "f.geojson", in: dir)
        let track = try write("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2026-01-01T00:00:00Z</time></trkpt>\n<trkpt lat=", to: "broken.gpx", in: dir)
        let run = perimeter("replay", "--fences", fences, "--track", track, "--radius", "10")
        #expect(run.status == 65)
        #expect(run.error.contains("broken.gpx:"), "\(run.error)")
    }

    @Test("validate lists every problem and exits 1 on errors, 0 on a clean file; --strict counts warnings")
    func validate() throws {
        let dir = try temporaryDirectory()
        let bad = try write(#"""
        {"type":"FeatureCollection","features":[
         {"type":"Feature","id":"p","properties":{},"geometry":{"type":"Point","coordinates":[0,0]}},
         {"type":"Feature","id":"bow","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}},
         {"type":"Feature","id":"p","properties":{"perimeter:events":"enter"},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}},
         {"type":"Feature","id":"lat","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,95],[0,0]]]}}
        ]}
        """#, to: "bad.geojson", in: dir)
        let run = perimeter("validate", bad)
        #expect(run.status == 1)
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("\(bad): warning: feature 0 (id \"p\")") && $0.hasSuffix("it gets the default radius of 300 m") })
        #expect(lines.contains { $0.contains("unknown event \"enter\"") })
        #expect(lines.contains { $0.contains("intersects itself") && $0.hasPrefix("\(bad): warning") })
        #expect(lines.contains { $0.contains("95") || $0.contains("latitude") })
        #expect(lines.last?.hasSuffix("2 fences valid, 2 errors, 2 warnings") == true, "\(lines.last ?? "")")

        let good = try write(squareFences, to: "good.geojson", in: dir)
        let clean = perimeter("validate", good, "--radius", "50")
        #expect(clean.status == 0)
        #expect(clean.output == "\(good): warning: feature 1 (id \"shop\") at $.features[1].geometry: Point fence sets no radius (\"perimeter:radius\" or \"MBX_GEOFENCE_POINT_RADIUS\"); it gets the default radius of 50 m\n\(good): 2 fences valid, 0 errors, 1 warning\n")

        let bowtie = try write(#"{"type":"Feature","id":"bow","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[1,0],[0,1],[0,0]]]}}"#, to: "bow.geojson", in: dir)
        #expect(perimeter("validate", bowtie).status == 0)
        #expect(perimeter("validate", bowtie, "--strict").status == 1)
    }

    @Test("every command answers --help with exit status 0", arguments: ["replay", "validate", "demo"])
    func help(command: String) {
        let run = perimeter(command, "--help")
        #expect(run.status == 0)
        #expect(run.output.hasPrefix("Usage: perimeter \(command)"))
    }

    @Test("no arguments prints usage and exits 64; --version prints the version")
    func noArguments() {
        #expect(perimeter([]).status == 64)
        #expect(perimeter("--version").output.hasPrefix("perimeter "))
    }
}
