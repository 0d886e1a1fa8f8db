import Foundation
import Testing

@Suite("Demo")
struct DemoTests {
    @Test("the demo drives through its areas: entries, dwells and exits, a dwell after parking, an SVG map")
    func demo() throws {
        let dir = try temporaryDirectory()
        let svgPath = dir.appendingPathComponent("demo.svg").path
        let run = perimeter("demo", "--svg", svgPath)
        #expect(run.status == 0, "\(run.error)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("Perimeter demo: van-7 drives") == true)
        // The van leaves the depot, visits every area, and its parked dwell at the depot fires last.
        #expect(lines[1] == "Entered Depot at 08:00:00 — van-7 at the Depot")
        #expect(lines.contains("Dwelled in Old Town at 08:02:01"))
        #expect(lines.contains { $0.hasPrefix("Entered Cathedral Close") })
        #expect(lines.contains { $0.hasPrefix("Entered Market Square") })
        #expect(lines.contains { $0.hasPrefix("Dwelled in River Walk") })
        // A fence's message follows the sentence that says what happened: entry and exit stay apart.
        #expect(lines.contains { $0.hasPrefix("Entered Hospital at 08:") && $0.hasSuffix(" — Hospital zone: mind pedestrians") })
        #expect(lines.contains { $0.hasPrefix("Exited Hospital at 08:") && $0.hasSuffix(" — Hospital zone: mind pedestrians") })
        #expect(lines.contains { $0.hasPrefix("Entered Industrial Park") })
        #expect(lines.filter { $0.hasPrefix("Dwelled in Depot at ") }.count == 1)
        #expect(lines.last == "Map written to \(svgPath)")
        let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
        #expect(svg.components(separatedBy: "data-fence=").count - 1 == 7)
        #expect(svg.contains(#"<g data-fence="depot" data-colour="rgb(17,97,195)">"#), "the depot's last event is the parked dwell")
        #expect(svg.contains(#"<g data-fence="hospital" data-colour="rgb(173,17,5)">"#))
        try XMLDocumentCheck.wellFormed(svg)
    }

    @Test("the exported demo data replays to the same events as the demo")
    func exportAndReplay() throws {
        let dir = try temporaryDirectory()
        #expect(perimeter("demo", "--export", dir.path).status == 0)
        let demo = perimeter("demo", "--format", "ndjson")
        let replay = perimeter("replay", "--fences", dir.appendingPathComponent("demo-fences.geojson").path,
                               "--track", dir.appendingPathComponent("demo-route.geojson").path,
                               "--speed", "12", "--device", "van-7", "--format", "ndjson")
        #expect(replay.status == 0, "\(replay.error)")
        // The replay starts at 1970 and stops at the last update (no parking): compare kinds and fences.
        func kindsAndFences(_ text: String) throws -> [[String]] {
            try eventKeys(text).map { [$0[0], $0[1]] }
        }
        let demoEvents = try kindsAndFences(demo.output)
        #expect(try kindsAndFences(replay.output) == Array(demoEvents.dropLast()))
        #expect(demoEvents.last == ["dwell", "depot"])
    }
}
