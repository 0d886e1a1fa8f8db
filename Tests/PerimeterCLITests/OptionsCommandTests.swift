import Foundation
@testable import PerimeterCLI
import PerimeterTestSupport
import Testing

private let smallSquare = #"""
{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"plaza","properties":{"name":"Plaza"},
  "geometry":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0.01],[0,0]]]}},
 {"type":"Feature","id":"gate","properties":{"name":"Gate","perimeter:interpolate":true,"perimeter:events":"entry,exit"},
  "geometry":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0.01],[0,0]]]}}
]}
"""#

private let passThrough = """
deviceId,time,lat,lon
a,2026-01-01T10:00:00Z,0.005,-0.01
a,2026-01-01T10:01:00Z,0.005,0.02
a,2026-01-01T10:02:00Z,0.005,-0.01
a,2026-01-01T10:03:00Z,0.005,0.005
"""

@Suite("Command line: detection options")
struct OptionsCommandTests {
    @Test("replay --crossings reports the passage between sparse fixes; fence keys turn options on per fence")
    func crossings() throws {
        let dir = try temporaryDirectory()
        let fences = try write(smallSquare, to: "f.geojson", in: dir)
        let track = try write(passThrough, to: "t.csv", in: dir)
        let run = perimeter("replay", "--fences", fences, "--track", track, "--crossings")
        #expect(run.status == 0, "\(run.error)")
        #expect(run.output.split(separator: "\n").map(String.init) == [
            "Crossed Plaza at 10:00:20",
            "Crossed Plaza at 10:01:20",
            "Entered Gate at 10:02:40",
            "Entered Plaza at 10:03:00",
        ])
        let json = perimeter("replay", "--fences", fences, "--track", track, "--format", "ndjson")
        let gate = json.output.split(separator: "\n").first { $0.contains("\"gate\"") }.map(String.init) ?? ""
        #expect(gate.contains("\"observedAt\":\"2026-01-01T10:03:00.000Z\"") && gate.contains("\"time\":\"2026-01-01T10:02:40.000Z\""), "\(gate)")
    }

    @Test("option flags are checked like every other flag", arguments: [
        (["--accuracy", "exact"], "--accuracy must be one of ignore, conservative"),
        (["--initial", "first"], "--initial must be one of entry, none, inside"),
        (["--entry-delay", "-5"], "--entry-delay must be a number"),
        (["--stale-exit"], "--stale-exit needs --stale-after"),
    ])
    func badFlags(extra: [String], message: String) throws {
        let run = perimeter(["replay", "--fences", "f", "--track", "t"] + extra)
        #expect(run.status == 64)
        #expect(run.error.contains(message), "\(run.error)")
    }

    @Test("study needs one study name and an existing fixtures folder")
    func studyUsage() {
        #expect(perimeter("study").status == 64)
        #expect(perimeter("study", "noise", "--fixtures", "/nonexistent/fixtures").status == 66)
        #expect(perimeter("study", "--help").output.contains("sparse"))
    }

    @Test("noise study: raw detection flaps; conservative accuracy and hysteresis = jitter radius give at most one transition",
          .enabled(if: Fixtures.available))
    func noiseStudy() throws {
        let datasets = try NoiseStudy.run(fixtures: Fixtures.url("").path)
        let jitter = try #require(datasets.first)
        func row(_ prefix: String, in d: NoiseStudy.Dataset) -> NoiseStudy.Row? { d.rows.first { $0.option.hasPrefix(prefix) } }
        #expect(try #require(row("raw", in: jitter)).transitions >= 4)
        #expect(try #require(row("conservative", in: jitter)).transitions <= 1)
        #expect(try #require(row("hysteresis \(Int(jitter.jitterRadius.rounded())) m", in: jitter)).transitions <= 1)
        let google = try #require(datasets.last)
        let raw = try #require(row("raw", in: google)).eventsPerHour
        #expect(try #require(row("conservative", in: google)).eventsPerHour < raw / 2)
        #expect(NoiseStudy.markdown(datasets).contains("| raw (no option) |"))
    }

    @Test("sparse study: crossings recover missed visits, interpolation cuts the timing error",
          .enabled(if: Fixtures.available))
    func sparseStudy() throws {
        let r = try SparseFixStudy.run(fixtures: Fixtures.url("").path)
        #expect(r.missed > r.visited / 2, "60 s fixes miss most 80 m fences")
        #expect(r.recovered > r.missed / 3)
        #expect(r.falseCrossings == 0)
        #expect(r.interpolatedEntryError.mean < r.entryError.mean)
        #expect(r.interpolatedExitError.mean < r.exitError.mean / 2)
    }
}

private let optionFences = #"""
{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"good","properties":{"perimeter:accuracy":"conservative","perimeter:hysteresis":"12",
   "perimeter:max-accuracy":80,"perimeter:entry-delay":30,"perimeter:exit-delay":0,"perimeter:crossings":true,
   "perimeter:interpolate":"true","perimeter:max-gap":120,"perimeter:initial":"inside","perimeter:dwell-every":600,
   "perimeter:stale-after":900,"perimeter:stale-exit":true,"perimeter:schedule":"Mon-Fri 08:00-18:00 UTC+01:00",
   "perimeter:events":["entry","exit","cross","inside"]},
  "geometry":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0.01],[0,0]]]}},
 {"type":"Feature","id":"bad","properties":{"perimeter:accuracy":"strict","perimeter:hysteresis":-1,
   "perimeter:crossings":"yes","perimeter:initial":3,"perimeter:schedule":"Mon 08:00-18:00"},
  "geometry":{"type":"Polygon","coordinates":[[[0,0],[0.01,0],[0.01,0.01],[0,0.01],[0,0]]]}}
]}
"""#

@Suite("Fence option keys")
struct FenceOptionKeyTests {
    @Test("every option key loads; bad values are errors naming the feature and the key")
    func keys() throws {
        let dir = try temporaryDirectory()
        let path = try write(optionFences, to: "f.geojson", in: dir)
        let file = try InputFiles.fences(path, options: .init())
        let good = try #require(file.fences.first)
        #expect(good.id == "good" && file.fences.count == 1)
        let o = good.options
        #expect(o.accuracy == .conservative && o.hysteresis == 12 && o.maximumAccuracy == 80)
        #expect(o.entryDelay == 30 && o.exitDelay == 0 && o.crossings == true && o.interpolate == true)
        #expect(o.maximumGap == 120 && o.initialTrigger == .inside && o.dwellEvery == 600)
        #expect(o.staleAfter == 900 && o.exitOnStale == true && o.schedule?.utcOffset == 3600)
        #expect(good.events.contains(.cross) && good.events.contains(.inside) && !good.events.contains(.dwell))
        let errors = file.errors.joined(separator: "\n")
        for key in ["perimeter:accuracy", "perimeter:hysteresis", "perimeter:crossings", "perimeter:initial", "perimeter:schedule"] {
            #expect(errors.contains("feature 1 (id \"bad\") at $.features[1].properties['\(key)']: \(key)"), "\(key): \(errors)")
        }
        #expect(file.errors.count == 5)
        let run = perimeter("validate", path)
        #expect(run.status == 1 && run.output.contains("needs an explicit UTC offset"))
    }
}
