import Foundation
import Testing
import PerimeterEngine
import PerimeterGeometry
import PerimeterTestSupport
@testable import PerimeterTracks

@Suite struct FormatTests {
    @Test(arguments: [
        ("a.GPX", "x", TrackFormat.gpx), ("a.nmea", "x", .nmea), ("a.tsv", "x", .csv), ("a.jsonl", "x", .ndjson), ("a.geojson", "x", .geojson),
        ("a", "\u{FEFF}  <gpx/>", .gpx), ("a.log", "$GPRMC,…", .nmea), ("a.json", "{\"type\":\"LineString\",\"coordinates\":[]}", .geojson),
        ("a.json", "{\"lat\":1}\n{\"lat\":2}\n", .ndjson), ("a.json", "{\n \"type\": \"FeatureCollection\"}", .geojson),
        ("a.txt", "time;latitude;longitude\n", .csv),
    ])
    func detects(_ source: String, _ content: String, _ expected: TrackFormat) throws {
        #expect(try TrackFormat.detect(source: source, bytes: Array(content.utf8)) == expected)
    }
}

@Suite struct GPXTests {
    @Test func scannerFeatures() throws {
        let text = """
        \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE gpx [ <!ENTITY x "y"> ]>
        <!-- comment with <trkpt lat="9" lon="9"> inside -->
        <g:gpx xmlns:g="http://www.topografix.com/GPX/1/1"><g:trk><g:trkseg>
        <g:trkpt lon='8.5' lat="47.25"><g:time><![CDATA[2020-01-01T00:00:00Z]]></g:time><g:speed>&#x31;.5</g:speed>
          <g:extensions><a:TrackPointExtension xmlns:a="x"><a:course>&#52;5</a:course><a:hAcc>4&amp;</a:hAcc></a:TrackPointExtension></g:extensions></g:trkpt>
        <g:trkpt lat="47.5" lon="8.75"><g:time>2020-01-01T01:00:00+01:00</g:time><g:extensions><accuracy>3.5</accuracy></g:extensions></g:trkpt>
        </g:trkseg></g:trk><g:wpt lat="1" lon="1"><g:time>2020-01-01T00:00:00Z</g:time></g:wpt></g:gpx>
        """
        let result = try TrackReader().read(Array(text.utf8), source: "t.gpx")
        #expect(result.updates.count == 2)
        #expect(result.updates[0] == LocationUpdate(device: "t", time: Date(timeIntervalSince1970: 1_577_836_800), latitude: 47.25, longitude: 8.5,
                                                    speed: 1.5, course: 45))
        #expect(result.updates[1].time == result.updates[0].time)
        #expect(result.updates[1].horizontalAccuracy == 3.5)
        #expect(result.warnings.count == 1)
        #expect(result.warnings.first?.message.contains("<accuracy>4&</accuracy>") == true)
        #expect(result.warnings.first?.line == 5)
    }
}

@Suite struct NMEATests {
    private func sentence(_ body: String) -> String {
        var sum: UInt8 = 0
        for c in body.utf8 { sum ^= c }
        return "$" + body + "*" + String(format: "%02x", sum)
    }

    @Test func mergesEpochsAcrossTalkersAndRollsOverMidnight() throws {
        let lines = [
            sentence("GNGGA,235959.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
            sentence("GNRMC,235959.00,A,4807.038,N,01131.000,E,1.0,90.0,311299,,"),
            sentence("GLGGA,000000.50,4807.039,S,01131.001,W,2,08,0.9,545.4,M,46.9,M,,"),
            sentence("GPGGA,000001.00,4807.039,S,01131.001,W,0,08,0.9,545.4,M,46.9,M,,"),
            "$GPGSV,3,1,11,03,03,111,00,04,15,270,00,06,01,010,00,13,06,292,00",
        ]
        let result = try TrackReader(device: "gps").read(Array(lines.joined(separator: "\r\n").utf8), source: "x.nmea")
        #expect(result.updates.count == 2)
        #expect(result.updates[0].time == Independent.time("1999-12-31T23:59:59Z"))
        #expect(result.updates[0].speed == 1852.0 / 3600)
        #expect(result.updates[1].time == Independent.time("2000-01-01T00:00:00.5Z"))
        #expect(result.updates[1].coordinate.latitude < 0 && result.updates[1].coordinate.longitude < 0)
        #expect(result.updates[1].speed == nil)
        #expect(result.warnings.map(\.line) == [4])
    }

    @Test func ggaBeforeFirstRMCTakesItsDate() throws {
        let lines = [
            sentence("GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
            sentence("GPRMC,120001.00,A,4807.038,N,01131.000,E,1.0,90.0,020304,,"),
        ]
        let result = try TrackReader().read(Array(lines.joined(separator: "\n").utf8), source: "x.nmea")
        #expect(result.updates.map(\.time) == [Independent.time("2004-03-02T12:00:00Z")!, Independent.time("2004-03-02T12:00:01Z")!])
    }
}

@Suite struct RecordTests {
    @Test func ndjsonKeysNestedCoordinatesAndDevices() throws {
        let text = """
        {"device_id":"a","timestamp":"2020-01-01T00:00:00Z","latitude":1.5,"longitude":2.5,"hacc":4,"speed":-1}

        {"user_id":7,"t":1577836800000,"coordinates":[3,4],"heading":370}
        {"type":"Feature","properties":{"time":1577836800},"geometry":{"type":"Point","coordinates":[5,6]}}
        """
        let result = try TrackReader(device: "fallback").read(Array(text.utf8), source: "x.ndjson")
        #expect(result.warnings.isEmpty)
        #expect(result.updates.map(\.device) == ["a", "7", "fallback"])
        #expect(result.updates[0].horizontalAccuracy == 4 && result.updates[0].speed == nil)
        #expect(result.updates[1].coordinate == Coordinate(latitude: 4, longitude: 3))
        #expect(result.updates[1].course == 10)
        #expect(result.updates.allSatisfy { $0.time == Date(timeIntervalSince1970: 1_577_836_800) })
    }

    @Test func geojsonTimesFromPropertiesAndFourthCoordinate() throws {
        let text = #"""
        {"type":"FeatureCollection","features":[
         {"type":"Feature","properties":{"device":"bus","coordTimes":[["2020-01-01T00:00:00Z","2020-01-01T00:00:01Z"],["2020-01-01T00:00:02Z"]]},
          "geometry":{"type":"MultiLineString","coordinates":[[[0,0],[1,1]],[[2,2]]]}},
         {"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[0,0,10,1577836800],[1,1,10,1577836801]]}}]}
        """#
        let result = try TrackReader().read(Array(text.utf8), source: "lines.geojson")
        #expect(result.warnings.isEmpty)
        #expect(result.updates.map(\.device) == ["bus", "bus", "bus", "lines", "lines"])
        #expect(result.updates.map(\.coordinate.latitude) == [0, 1, 2, 0, 1])
        #expect(result.updates.map(\.time.timeIntervalSince1970) == [1_577_836_800, 1_577_836_801, 1_577_836_802, 1_577_836_800, 1_577_836_801])
    }

    @Test func deviceIdRule() {
        #expect(SourceName.defaultDevice(for: "/x/y/yellowstone_grand_loop_road.gpx") == "yellowstone_grand_loop_road")
        #expect(SourceName.defaultDevice(for: "a.b.csv") == "a.b")
        #expect(SourceName.defaultDevice(for: ".hidden") == ".hidden")
        #expect(SourceName.defaultDevice(for: "plain") == "plain")
    }
}

@Suite struct FuzzTests {
    /// Random byte mutations of valid inputs in every format must never crash (errors are fine).
    @Test(arguments: TrackFormat.allCases)
    func mutationsDoNotCrash(_ format: TrackFormat) {
        let seeds: [TrackFormat: String] = [
            .gpx: "<?xml version=\"1.0\"?><gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time><speed>1</speed></trkpt><!-- c --><trkpt lat='3' lon='4'><time><![CDATA[2020-01-01T00:00:01Z]]></time></trkpt></trkseg></trk></gpx>",
            .nmea: "$GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*66\n$GPRMC,120000.00,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A\n",
            .csv: "id;time;lat;lon;acc\n1;2020-01-01T00:00:00Z;1;2;3\n\"2\";1577836800;3;4;\"5\"\n",
            .ndjson: "{\"id\":1,\"time\":\"2020-01-01T00:00:00Z\",\"lat\":1,\"lon\":2}\n{\"id\":2,\"time\":1,\"coordinates\":[1,2]}\n",
            .geojson: "{\"type\":\"Feature\",\"properties\":{\"times\":[1,2]},\"geometry\":{\"type\":\"LineString\",\"coordinates\":[[0,0],[1,1]]}}",
        ]
        var rng = SplitMix64(seed: UInt64(format.rawValue.utf8.count) &* 31)
        let base = Array(seeds[format]!.utf8)
        let alphabet = Array("<>/=\"'&;#$*,\n\r\t{}[]:.-+eZT0123456789 ".utf8) + [0x00, 0xFF, 0xC3]
        let simulation = TrackSimulation(speed: 1000, interval: 1)
        for round in 0..<1500 {
            var bytes = base
            for _ in 0..<Int.random(in: 1...6, using: &rng) {
                guard !bytes.isEmpty else { break }
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                switch Int.random(in: 0..<4, using: &rng) {
                case 0: bytes[i] = alphabet.randomElement(using: &rng)!
                case 1: bytes.remove(at: i)
                case 2: bytes.insert(alphabet.randomElement(using: &rng)!, at: i)
                default: bytes.removeSubrange(i..<min(bytes.count, i + Int.random(in: 1...20, using: &rng)))
                }
            }
            let reader = TrackReader(format: round % 3 == 0 ? nil : format, simulation: round % 2 == 0 ? simulation : nil)
            if let result = try? reader.read(bytes, source: "fuzz.\(format.rawValue)") {
                #expect(result.updates.allSatisfy { abs($0.coordinate.latitude) <= 90 && abs($0.coordinate.longitude) <= 180 })
            }
        }
    }
}
