import PerimeterFences
import PerimeterGeoJSON
import PerimeterServer
import PerimeterService
import Testing

@Suite("The options file of perimeter serve --config")
struct OptionsFileTests {
    static func read(_ text: String, base: GeofencingOptions = GeofencingOptions()) throws(OptionsFile.Problem) -> GeofencingOptions {
        try OptionsFile.options(from: Array(text.utf8), base: base)
    }

    @Test("every member maps to its GeofencingOptions field; members left out keep the base's value")
    func everyKey() throws {
        let options = try Self.read("""
            {"maximumMonitoredFeatures": 500, "defaultDwellTime": 120, "defaultRadius": 75.5,
             "maximumHorizontalAccuracy": 40, "timeModel": "live", "allowedLateness": 2, "maximumFutureSkew": 30,
             "consentByDefault": false, "reorderWindow": 3, "deduplicate": true,
             "detectionOptions": {"perimeter:crossings": true, "perimeter:entry-delay": 10, "perimeter:accuracy": "conservative"}}
            """)
        #expect(options.maximumMonitoredFeatures == 500)
        #expect(options.defaultDwellTime == 120)
        #expect(options.defaultRadius == 75.5)
        #expect(options.maximumHorizontalAccuracy == 40)
        #expect(options.timeModel == .live)
        #expect(options.allowedLateness == 2)
        #expect(options.maximumFutureSkew == 30)
        #expect(options.consentByDefault == false)
        #expect(options.reorderWindow == 3)
        #expect(options.deduplicate)
        #expect(options.detectionOptions == DetectionOptions(accuracy: .conservative, entryDelay: 10, crossings: true))
        #expect(Set(OptionsFile.keys).count == 11)

        let base = GeofencingOptions(defaultDwellTime: 60, durability: .everyUpdates(10))
        let kept = try Self.read(#"{"defaultRadius": null}"#, base: base)
        #expect(kept.defaultRadius == nil)
        #expect(kept.defaultDwellTime == 60 && kept.durability == .everyUpdates(10))
        #expect(try Self.read("{}") == GeofencingOptions())
    }

    @Test("a problem names the member and what is wrong", arguments: [
        ("[1]", "$: must be a JSON object"),
        ("{", "$: not valid JSON"),
        (#"{"defaultDwell": 5}"#, "$.defaultDwell: is not an option; the file may set maximumMonitoredFeatures"),
        (#"{"allowedLateness": -1}"#, "$.allowedLateness: must be a number ≥ 0 (seconds), not -1"),
        (#"{"maximumFutureSkew": "60"}"#, #"$.maximumFutureSkew: must be a number ≥ 0 (seconds), not "60""#),
        (#"{"defaultRadius": 0}"#, "$.defaultRadius: must be a number > 0"),
        (#"{"maximumMonitoredFeatures": 2.5}"#, "$.maximumMonitoredFeatures: must be a whole number"),
        (#"{"timeModel": "wall"}"#, #"$.timeModel: must be "live" or "data", not "wall""#),
        (#"{"deduplicate": 1}"#, "$.deduplicate: must be true or false, not 1"),
        (#"{"detectionOptions": {"hysteresis": 5}}"#, #"$.detectionOptions["hysteresis"]: is not a detection option"#),
        (#"{"detectionOptions": {"perimeter:max-gap": 0}}"#, #"$.detectionOptions["perimeter:max-gap"]: perimeter:max-gap must be a positive number"#),
        (#"{"detectionOptions": 5}"#, "$.detectionOptions: must be an object"),
    ])
    func problems(text: String, message: String) {
        do {
            _ = try Self.read(text)
            Issue.record("expected a problem for \(text)")
        } catch {
            #expect("\(error)".hasPrefix(message), "\(error)")
        }
    }
}
