import Foundation
import Testing
@testable import PerimeterTracks

/// A malformed input and the problem it must give: thrown (`fatal`) or as the first warning.
struct Malformed: Sendable, CustomTestStringConvertible {
    var label: String
    var source: String
    var content: String
    var fatal: Bool
    var message: String
    var line: Int?
    var testDescription: String { label }
}

private let gpxHead = "<?xml version=\"1.0\"?>\n<gpx version=\"1.1\">\n<trk><trkseg>\n"
private let goodPoint = "<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkpt>\n"
private let gpxTail = "</trkseg></trk>\n</gpx>\n"
private func nmea(_ body: String) -> String {
    var sum: UInt8 = 0
    for c in body.utf8 { sum ^= c }
    return "$" + body + "*" + String(format: "%02X", sum)
}
private let rmc = nmea("GPRMC,120000.00,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W")

let malformedCases: [Malformed] = [
    Malformed(label: "empty file", source: "a.gpx", content: "", fatal: true, message: "the file is empty", line: nil),
    Malformed(label: "only spaces", source: "a.csv", content: "  \n\n ", fatal: true, message: "only white space", line: nil),
    Malformed(label: "binary junk, unknown extension", source: "a.bin", content: "\u{01}\u{02}\u{7f}zz\u{03}", fatal: true, message: "cannot tell the track format", line: nil),
    Malformed(label: "binary junk named .gpx", source: "a.gpx", content: "\u{01}\u{02}junk", fatal: true, message: "text before the root element", line: 1),
    Malformed(label: "gpx lat not a number", source: "bike.gpx", content: gpxHead + goodPoint + "<trkpt lat=\"abc\" lon=\"2\"><time>2020-01-01T00:00:01Z</time></trkpt>\n" + gpxTail,
              fatal: false, message: "<trkpt> has lat=\"abc\", not a number", line: 5),
    Malformed(label: "gpx lat 95", source: "a.gpx", content: gpxHead + goodPoint + "<trkpt lat=\"95\" lon=\"2\"><time>2020-01-01T00:00:01Z</time></trkpt>\n" + gpxTail,
              fatal: false, message: "lat=\"95\", outside -90…90", line: 5),
    Malformed(label: "gpx lon 181", source: "a.gpx", content: gpxHead + goodPoint + "<trkpt lat=\"9\" lon='181'><time>2020-01-01T00:00:01Z</time></trkpt>\n" + gpxTail,
              fatal: false, message: "lon=\"181\", outside -180…180", line: 5),
    Malformed(label: "gpx missing lat", source: "a.gpx", content: gpxHead + goodPoint + "<trkpt lon=\"2\"><time>2020-01-01T00:00:01Z</time></trkpt>\n" + gpxTail,
              fatal: false, message: "<trkpt> has no lat attribute", line: 5),
    Malformed(label: "gpx bad time", source: "a.gpx", content: gpxHead + goodPoint + "<trkpt lat=\"1\" lon=\"2\"><time>yesterday</time></trkpt>\n" + gpxTail,
              fatal: false, message: "<time>yesterday</time> of <trkpt> is not an ISO 8601 time", line: 5),
    Malformed(label: "gpx month 13", source: "a.gpx", content: gpxHead + goodPoint + "<trkpt lat=\"1\" lon=\"2\"><time>2020-13-01T00:00:00Z</time></trkpt>\n" + gpxTail,
              fatal: false, message: "is not an ISO 8601 time", line: 5),
    Malformed(label: "gpx bad speed kept", source: "a.gpx", content: gpxHead + "<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time><speed>fast</speed></trkpt>\n" + gpxTail,
              fatal: false, message: "<speed>fast</speed> of <trkpt> is not a number; speed ignored", line: 4),
    Malformed(label: "gpx unterminated tag", source: "a.gpx", content: gpxHead + "<trkpt lat=\"1\" lon=\"2\"", fatal: true, message: "is never closed", line: 4),
    Malformed(label: "gpx truncated file", source: "a.gpx", content: gpxHead + goodPoint, fatal: true, message: "<trkseg> opened here is never closed", line: 3),
    Malformed(label: "gpx mismatched end tag", source: "a.gpx", content: gpxHead + "<trkpt lat=\"1\" lon=\"2\"></trk>\n" + gpxTail,
              fatal: true, message: "end tag </trk> does not match <trkpt> opened at line 4", line: 4),
    Malformed(label: "gpx unknown entity", source: "a.gpx", content: gpxHead + "<trkpt lat=\"1&foo;\" lon=\"2\"/>\n" + gpxTail, fatal: true, message: "unknown entity &foo;", line: 4),
    Malformed(label: "gpx unclosed comment", source: "a.gpx", content: gpxHead + "<!-- oops\n" + goodPoint, fatal: true, message: "comment <!-- is never closed", line: 4),
    Malformed(label: "gpx wrong root", source: "a.gpx", content: "<kml><Placemark/></kml>", fatal: true, message: "the root element is <kml>, not <gpx>", line: 1),
    Malformed(label: "gpx attribute without quotes", source: "a.gpx", content: gpxHead + "<trkpt lat=1 lon=\"2\"/>\n" + gpxTail, fatal: true, message: "attribute lat of <trkpt> has no quoted value", line: 4),
    Malformed(label: "gpx no points", source: "a.gpx", content: "<gpx></gpx>", fatal: true, message: "no <trkpt>, <rtept> or <wpt> points", line: nil),
    Malformed(label: "gpx untimed", source: "a.gpx", content: gpxHead + "<trkpt lat=\"1\" lon=\"2\"/>\n" + gpxTail, fatal: true, message: "give a simulation speed", line: 4),
    Malformed(label: "nmea bad checksum", source: "a.nmea", content: rmc + "\n" + "$GPRMC,120001.00,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*00\n",
              fatal: false, message: "checksum *00 does not match the sentence", line: 2),
    Malformed(label: "nmea bad latitude", source: "a.nmea", content: rmc + "\n" + nmea("GPRMC,120001.00,A,48x7.038,N,01131.000,E,022.4,084.4,230394,003.1,W") + "\n",
              fatal: false, message: "latitude \"48x7.038,N\" is not ddmm.mmmm,N|S", line: 2),
    Malformed(label: "nmea minutes 60", source: "a.nmea", content: rmc + "\n" + nmea("GPRMC,120001.00,A,4860.000,N,01131.000,E,022.4,084.4,230394,003.1,W") + "\n",
              fatal: false, message: "is not ddmm.mmmm,N|S", line: 2),
    Malformed(label: "nmea bad date", source: "a.nmea", content: rmc + "\n" + nmea("GPRMC,120001.00,A,4807.038,N,01131.000,E,022.4,084.4,320394,003.1,W") + "\n",
              fatal: false, message: "date \"320394\" is not ddmmyy", line: 2),
    Malformed(label: "nmea void fix counted", source: "a.nmea", content: rmc + "\n" + nmea("GPRMC,120001.00,V,,,,,,,230394,,") + "\n",
              fatal: false, message: "skipped 1 sentence without a valid fix", line: 2),
    Malformed(label: "nmea junk line", source: "a.nmea", content: rmc + "\nhello\n", fatal: false, message: "not an NMEA sentence", line: 2),
    Malformed(label: "nmea GGA only, no date", source: "a.nmea", content: nmea("GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,") + "\n",
              fatal: true, message: "no date", line: 1),
    Malformed(label: "nmea all checksums bad", source: "a.nmea", content: "$GPRMC,1*00\n", fatal: true, message: "no NMEA sentence with a valid checksum", line: nil),
    Malformed(label: "csv missing lat column", source: "a.csv", content: "id,time,lon\n1,2020-01-01T00:00:00Z,3\n", fatal: true, message: "the header has no latitude column", line: 1),
    Malformed(label: "csv missing time column", source: "a.csv", content: "\n\nlat;lon\n1;2\n", fatal: true, message: "the header has no time column", line: 3),
    Malformed(label: "csv ragged row", source: "a.csv", content: "time,lat,lon\n2020-01-01T00:00:00Z,1,2\n2020-01-01T00:00:01Z,1\n", fatal: false,
              message: "row has 2 fields but the header has 3; row skipped", line: 3),
    Malformed(label: "csv bad number", source: "a.csv", content: "time,lat,lon\n2020-01-01T00:00:00Z,1,2\n2020-01-01T00:00:01Z,north,2\n", fatal: false,
              message: "latitude \"north\" is not a number; row skipped", line: 3),
    Malformed(label: "csv lat 95", source: "a.csv", content: "time,lat,lon\n2020-01-01T00:00:01Z,95,2\n", fatal: false, message: "latitude 95.0 is outside -90…90", line: 2),
    Malformed(label: "csv bad time", source: "a.csv", content: "time,lat,lon\n2020-02-30T00:00:01Z,5,2\n", fatal: false,
              message: "time \"2020-02-30T00:00:01Z\" is neither ISO 8601 nor an epoch number", line: 2),
    Malformed(label: "csv empty time", source: "a.csv", content: "time,lat,lon\n,5,2\n", fatal: false, message: "the record has no time", line: 2),
    Malformed(label: "csv unclosed quote", source: "a.csv", content: "time,lat,lon\n2020-01-01T00:00:00Z,1,2\n\"2020,1,2\n", fatal: false, message: "quoted field is never closed", line: 3),
    Malformed(label: "csv bad accuracy kept", source: "a.csv", content: "time,lat,lon,acc\n2020-01-01T00:00:00Z,1,2,big\n", fatal: false, message: "accuracy \"big\" is not a number; accuracy ignored", line: 2),
    Malformed(label: "ndjson bad json line", source: "a.ndjson", content: "{\"t\":1,\"lat\":1,\"lon\":2}\n{\"t\":2,\n", fatal: false, message: "the line is not valid JSON", line: 2),
    Malformed(label: "ndjson not objects", source: "a.ndjson", content: "[1,2]\n", fatal: true, message: "not NDJSON: the line is JSON but not an object", line: 1),
    Malformed(label: "ndjson missing lon", source: "a.ndjson", content: "\n{\"time\":\"2020-01-01T00:00:00Z\",\"lat\":1}\n", fatal: false, message: "the record has no longitude", line: 2),
    Malformed(label: "geojson invalid json", source: "a.geojson", content: "{\"type\": ", fatal: true, message: "not valid JSON", line: 1),
    Malformed(label: "geojson unknown type", source: "a.geojson", content: "{\"type\": \"Banana\"}", fatal: true, message: "unknown type \"Banana\"", line: 1),
    Malformed(label: "geojson times count mismatch", source: "a.geojson",
              content: #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"coordTimes":[1]},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}},{"type":"Feature","properties":{"times":[1,2]},"geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}]}"#,
              fatal: false, message: "features[0].geometry has 2 vertices but 1 times", line: 1),
    Malformed(label: "geojson polygon only", source: "a.geojson", content: #"{"type":"Polygon","coordinates":[[[0,0],[1,0],[0,1],[0,0]]]}"#, fatal: true, message: "no LineString", line: nil),
]

@Test(arguments: malformedCases)
func malformedInputIsReported(_ c: Malformed) throws {
    let reader = TrackReader()
    if c.fatal {
        let error = try #require(throws: TrackProblem.self) { try reader.read(Array(c.content.utf8), source: c.source) }
        #expect(error.message.contains(c.message), "\(error)")
        #expect(error.line == c.line, "\(error)")
        #expect(error.source == c.source)
    } else {
        let result = try reader.read(Array(c.content.utf8), source: c.source)
        let warning = try #require(result.warnings.first)
        #expect(warning.message.contains(c.message), "\(warning)")
        #expect(warning.line == c.line, "\(warning)")
        #expect(warning.description.hasPrefix(c.source + (c.line.map { ":\($0)" } ?? ":")))
    }
}

@Test func malformedCatalogueIsLargeEnough() {
    #expect(malformedCases.count >= 25)
}
