import Foundation
import PerimeterTestSupport
import Testing

/// The Mapbox Yellowstone tutorial, replayed end to end against independently computed expected events.
@Suite("Yellowstone tutorial", .enabled(if: Fixtures.available))
struct YellowstoneTests {
    let fences = Fixtures.url("yellowstone/yellowstone.geojson").path
    let track = Fixtures.url("yellowstone/yellowstone_grand_loop_road.gpx").path

    @Test("replay --format ndjson gives exactly the expected events", arguments: [
        ([String](), "expected-events.ndjson"),
        (["--dwell", "20"], "expected-events-dwell20s.ndjson"),
    ])
    func expectedEvents(extra: [String], expectedFile: String) throws {
        let run = perimeter(["replay", "--fences", fences, "--track", track, "--format", "ndjson"] + extra)
        #expect(run.status == 0, "\(run.error)")
        #expect(run.error.isEmpty)
        let expected = try String(contentsOf: Fixtures.url("yellowstone/\(expectedFile)"), encoding: .utf8)
        #expect(try eventKeys(run.output) == eventKeys(expected))
    }

    @Test("every NDJSON event carries id and visitId; ids are unique; a visit's events share its id")
    func identifiers() throws {
        let run = perimeter("replay", "--fences", fences, "--track", track, "--format", "ndjson", "--dwell", "20")
        let objects = try run.output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        let ids = objects.compactMap { $0["id"] as? String }
        #expect(ids.count == objects.count)
        #expect(Set(ids).count == ids.count)
        let visits = Dictionary(grouping: objects, by: { $0["visitId"] as? String ?? "" })
        #expect(visits.count == 9)
        #expect(visits.values.allSatisfy { ($0.first?["type"] as? String) == "entry" && ($0.last?["type"] as? String) == "exit" })
        // Deterministic: a second run gives the same ids.
        let again = perimeter("replay", "--fences", fences, "--track", track, "--format", "ndjson", "--dwell", "20")
        #expect(again.output == run.output)
    }

    @Test("text output reads like the tutorial's banner")
    func textBanner() {
        let run = perimeter("replay", "--fences", fences, "--track", track)
        #expect(run.status == 0)
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "Entered Yellowstone Falls at 17:19:33")
        #expect(lines.contains("Entered Firehole River at 17:22:23"))
        #expect(lines.contains("Exited Hayden Valley at 17:20:06 after 22 s"))
    }

    @Test("--svg draws every fence coloured by its last event, the track and the events")
    func svg() throws {
        let directory = try temporaryDirectory()
        let svgPath = directory.appendingPathComponent("map.svg").path
        let run = perimeter("replay", "--fences", fences, "--track", track, "--svg", svgPath)
        #expect(run.status == 0)
        let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
        #expect(svg.hasPrefix("<svg"))
        #expect(svg.components(separatedBy: "data-fence=").count - 1 == 8)
        // Every fence was exited last.
        #expect(svg.contains(#"<g data-fence="hayden-valley" data-colour="rgb(173,17,5)">"#))
        #expect(svg.components(separatedBy: #"data-colour="rgb(173,17,5)""#).count - 1 == 8, "every fence was exited last")
        #expect(svg.contains("<polyline data-device=\"yellowstone_grand_loop_road\""))
        #expect(svg.components(separatedBy: "<circle").count - 1 == 18)
        try XMLDocumentCheck.wellFormed(svg)
    }

    @Test("the real executable gives the same events as the in-process run")
    func realProcess() throws {
        let executable = try #require(perimeterExecutable(), "perimeter executable not built next to the tests")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["replay", "--fences", fences, "--track", track, "--format", "ndjson", "--dwell", "20"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let expected = try String(contentsOf: Fixtures.url("yellowstone/expected-events-dwell20s.ndjson"), encoding: .utf8)
        #expect(try eventKeys(String(decoding: data, as: UTF8.self)) == eventKeys(expected))
    }
}

/// A minimal well-formedness check for generated SVG: balanced tags.
enum XMLDocumentCheck {
    struct Unbalanced: Error {}
    static func wellFormed(_ text: String) throws {
        var depth = 0
        var index = text.startIndex
        while let open = text[index...].firstIndex(of: "<") {
            guard let close = text[open...].firstIndex(of: ">") else { throw Unbalanced() }
            let tag = text[open...close]
            if tag.hasPrefix("</") { depth -= 1 } else if !tag.hasSuffix("/>") { depth += 1 }
            if depth < 0 { throw Unbalanced() }
            index = text.index(after: close)
        }
        if depth != 0 { throw Unbalanced() }
    }
}

/// `replay --threads N`: the devices split among N engine shards, the output the same for every N.
@Suite("Replay on several threads", .enabled(if: Fixtures.available))
struct ReplayThreadsTests {
    @Test("five devices on the Yellowstone loop at the same times: --threads 1, 2, 3 and 0 print the same events")
    func sameOutputForAnyThreadCount() throws {
        let directory = try temporaryDirectory()
        let fences = Fixtures.url("yellowstone/yellowstone.geojson").path
        let source = try Data(contentsOf: Fixtures.url("yellowstone/yellowstone_grand_loop_road.gpx"))
        // Each copy is a device of its own (named after its file); equal times put the merge order to work.
        var tracks: [String] = []
        for name in ["car", "bus", "van", "bike", "e\u{301}bike"] {
            let url = directory.appendingPathComponent("\(name).gpx")
            try source.write(to: url)
            tracks += ["--track", url.path]
        }
        let base = ["replay", "--fences", fences, "--format", "ndjson", "--dwell", "20"] + tracks
        let one = perimeter(base + ["--threads", "1"])
        #expect(one.status == 0, "\(one.error)")
        let expected = try String(contentsOf: Fixtures.url("yellowstone/expected-events-dwell20s.ndjson"), encoding: .utf8)
        #expect(try eventKeys(one.output).count == 5 * eventKeys(expected).count)
        for threads in ["2", "3", "0"] {
            let run = perimeter(base + ["--threads", threads])
            #expect(run.status == 0, "\(run.error)")
            #expect(run.output == one.output, "--threads \(threads)")
        }
        #expect(perimeter(base).output == one.output, "the default is one thread, with the same order")
    }

    @Test("--threads must be a count")
    func badThreadCount() {
        let run = perimeter("replay", "--fences", "f.geojson", "--track", "t.gpx", "--threads", "-1")
        #expect(run.status != 0)
        #expect(run.error.contains("threads"))
    }
}
