import Foundation
import Testing
import PerimeterEngine
import PerimeterGeometry
import PerimeterTestSupport
@testable import PerimeterTracks

/// What reading a fixture must give.
enum Outcome: Sendable {
    /// Reads `count` updates with `warnings` warnings; `tag` names the GPX elements used ("" for other formats).
    case reads(count: Int, warnings: Int, tag: String)
    /// Fails with a message containing `message`, on `line` (nil: no line).
    case fails(message: String, line: Int?)
}

/// Every file under fixtures/tracks, plus the Yellowstone GPX, with its expected outcome.
let fixtureOutcomes: [(String, Outcome)] = [
    ("tracks/csv/google_trajectory.csv", .reads(count: 416, warnings: 0, tag: "")),
    ("tracks/csv/gpsies_trajectory.csv", .reads(count: 247, warnings: 0, tag: "")),
    ("tracks/csv/posmo_trajectory.csv", .reads(count: 1327, warnings: 0, tag: "")),
    ("tracks/gpx/devices/bike.gpx", .reads(count: 1812, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/datalog.gpx", .reads(count: 500, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/dg100.gpx", .reads(count: 12027, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/garmin-edge-800-output.gpx", .reads(count: 1286, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/garmin-oregon-700-output.gpx", .reads(count: 997, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/lezyne_super_gps-garmin_fit-sample-bad-endian.gpx", .reads(count: 804, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/mtk_logger.gpx", .reads(count: 817, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/sbn-v13.gpx", .reads(count: 3453, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/stationary_jitter.gpx", .reads(count: 689, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/devices/wahoo-element-bolt.gpx", .reads(count: 1101, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/LICENSE.gpxpy.txt", .fails(message: "cannot tell the track format", line: nil)),
    ("tracks/gpx/gpxpy/Mojstrovka.gpx", .reads(count: 184, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/around-visnjan-with-car.gpx", .reads(count: 104, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/cerknicko-jezero-no-creator.gpx", .reads(count: 296, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/cerknicko-jezero-with-elevations-zero.gpx", .reads(count: 296, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/cerknicko-jezero-without-elevations.gpx", .reads(count: 295, warnings: 1, tag: "trkpt")),
    ("tracks/gpx/gpxpy/cerknicko-jezero.gpx", .reads(count: 296, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/cerknicko-without-times.gpx", .reads(count: 5, warnings: 291, tag: "trkpt")),
    ("tracks/gpx/gpxpy/custom_schema_locations.gpx", .fails(message: "no <trkpt>, <rtept> or <wpt> points", line: nil)),
    ("tracks/gpx/gpxpy/default_schema_locations.gpx", .fails(message: "no <trkpt>, <rtept> or <wpt> points", line: nil)),
    ("tracks/gpx/gpxpy/first_and_last_elevation.gpx", .reads(count: 10, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/gpx-with-node-with-comments.gpx", .reads(count: 1, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/gpx1.0_with_all_fields.gpx", .reads(count: 1, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/gpx1.1_with_all_fields.gpx", .reads(count: 1, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/gpx1.1_with_extensions.gpx", .fails(message: "the <wpt> points have no <time>", line: 2)),
    ("tracks/gpx/gpxpy/gpx1.1_with_extensions_without_namespaces.gpx", .fails(message: "the <wpt> points have no <time>", line: 2)),
    ("tracks/gpx/gpxpy/gpx_with_garmin_extension.gpx", .reads(count: 1, warnings: 0, tag: "wpt")),
    ("tracks/gpx/gpxpy/korita-zbevnica.gpx", .reads(count: 513, warnings: 358, tag: "trkpt")),
    ("tracks/gpx/gpxpy/route.gpx", .fails(message: "the <rtept> points have no <time>", line: 4)),
    ("tracks/gpx/gpxpy/track-with-empty-segment.gpx", .reads(count: 9, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/track-with-extremes.gpx", .fails(message: "the <trkpt> points have no <time>", line: 14)),
    ("tracks/gpx/gpxpy/track-with-less-sec-time.gpx", .reads(count: 2, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/track-with-small-floats.gpx", .fails(message: "the <trkpt> points have no <time>", line: 12)),
    ("tracks/gpx/gpxpy/track_with_dilution_errors.gpx", .fails(message: "the <trkpt> points have no <time>", line: 16)),
    ("tracks/gpx/gpxpy/track_with_speed.gpx", .reads(count: 3, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/unicode.gpx", .fails(message: "the <wpt> points have no <time>", line: 10)),
    ("tracks/gpx/gpxpy/unicode2.gpx", .fails(message: "no <trkpt>, <rtept> or <wpt> points", line: nil)),
    ("tracks/gpx/gpxpy/unicode_with_bom.gpx", .reads(count: 1, warnings: 0, tag: "wpt")),
    ("tracks/gpx/gpxpy/unicode_with_bom_noencoding.gpx", .fails(message: "the <wpt> points have no <time>", line: 3)),
    ("tracks/gpx/gpxpy/validation_gpx10.gpx", .reads(count: 1, warnings: 0, tag: "trkpt")),
    ("tracks/gpx/gpxpy/validation_gpx11.gpx", .reads(count: 1, warnings: 0, tag: "trkpt")),
    ("tracks/nmea/nmea_log.nmea", .reads(count: 154, warnings: 0, tag: "")),
    ("tracks/nmea/nmea_ms.nmea", .reads(count: 32, warnings: 0, tag: "")),
    ("tracks/santa_barbara_walking_tour.geojson", .fails(message: "the track has no times", line: nil)),
    ("yellowstone/yellowstone_grand_loop_road.gpx", .reads(count: 46, warnings: 0, tag: "wpt")),
]

@Suite(.enabled(if: Fixtures.available))
struct FixtureTests {
    @Test func tableCoversEveryTrackFixture() throws {
        let root = Fixtures.url("tracks")
        let enumerator = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]))
        let rootPath = root.resolvingSymlinksInPath().path
        var found = Set<String>()
        for case let url as URL in enumerator where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
            found.insert("tracks" + url.resolvingSymlinksInPath().path.dropFirst(rootPath.count))
        }
        let listed = Set(fixtureOutcomes.map(\.0).filter { $0.hasPrefix("tracks/") })
        #expect(found == listed)
    }

    @Test(arguments: fixtureOutcomes.map(\.0))
    func fixtureReadsAsExpected(_ path: String) throws {
        let outcome = try #require(fixtureOutcomes.first { $0.0 == path }?.1)
        let data = try Fixtures.data(path)
        let name = String(path.split(separator: "/").last!)
        switch outcome {
        case let .fails(message, line):
            let error = try #require(throws: TrackProblem.self) { try TrackReader().read(data, source: name) }
            #expect(error.source == name)
            #expect(error.message.contains(message), "\(error)")
            #expect(error.line == line, "\(error)")
        case let .reads(count, warnings, tag):
            let result = try TrackReader().read(data, source: name)
            #expect(result.updates.count == count)
            #expect(result.warnings.count == warnings, "\(result.warnings.prefix(3))")
            for warning in result.warnings { #expect(warning.line != nil && warning.source == name) }
            let device = DeviceID(String(name.split(separator: ".").dropLast().joined(separator: ".")))
            let text = String(decoding: data, as: UTF8.self)
            if !tag.isEmpty {
                #expect(result.updates.allSatisfy { $0.device == device })
                let points = Independent.gpxPoints(text, tag: tag).filter { $0.time != nil }
                #expect(points.count == count)
                try check(result.updates.first, against: try #require(points.first))
                try check(result.updates.last, against: try #require(points.last))
            } else if name.hasSuffix(".csv") {
                try checkCSV(text, result: result)
            } else if name.hasSuffix(".nmea") {
                #expect(result.updates.allSatisfy { $0.device == device })
            }
        }
    }

    private func check(_ update: LocationUpdate?, against point: Independent.Point) throws {
        let update = try #require(update)
        #expect(update.coordinate.latitude == point.lat)
        #expect(update.coordinate.longitude == point.lon)
        let time = try #require(point.time)
        #expect(abs(update.time.timeIntervalSince(time)) < 1e-3)
    }

    /// First and last rows split by hand; device ids, coordinates, times and accuracy compared.
    private func checkCSV(_ text: String, result: TrackReadResult) throws {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        let header = lines[0].split(separator: ";").map(String.init)
        for (line, update) in [(lines[1], result.updates.first), (lines[lines.count - 1], result.updates.last)] {
            let update = try #require(update)
            let fields = line.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
            let row = Dictionary(uniqueKeysWithValues: zip(header, fields))
            #expect(update.device == DeviceID(row["user_id"]!))
            #expect(update.coordinate.latitude == Double(row["latitude"]!)!)
            #expect(update.coordinate.longitude == Double(row["longitude"]!)!)
            #expect(update.horizontalAccuracy == Double(row["accuracy"]!)!)
            let time = try #require(Independent.time(row["tracked_at"]!))
            #expect(abs(update.time.timeIntervalSince(time)) < 1e-6)
        }
    }

    @Test func googleAccuracyValues() throws {
        let result = try TrackReader().read(try Fixtures.data("tracks/csv/google_trajectory.csv"), source: "google_trajectory.csv")
        #expect(result.updates.prefix(3).map(\.horizontalAccuracy) == [20, 36, 38])
    }

    @Test func nmeaMatchesIndependentCount() throws {
        for name in ["nmea_log.nmea", "nmea_ms.nmea"] {
            let text = String(decoding: try Fixtures.data("tracks/nmea/" + name), as: UTF8.self)
            var times = Set<String>()
            for line in text.split(whereSeparator: \.isNewline) where line.contains("RMC,") || line.contains("GGA,") {
                times.insert(String(line.split(separator: ",", omittingEmptySubsequences: false)[1]))
            }
            let result = try TrackReader().read(try Fixtures.data("tracks/nmea/" + name), source: name)
            #expect(result.updates.count == times.count)
        }
    }

    @Test func nmeaFirstFix() throws {
        // $GPGGA,032908.379,4231.8291,N,08807.3033,W,… and $GPRMC,032908.379,A,…,0.17,138.92,070804
        let result = try TrackReader().read(try Fixtures.data("tracks/nmea/nmea_log.nmea"), source: "nmea_log.nmea")
        let first = try #require(result.updates.first)
        #expect(abs(first.coordinate.latitude - (42 + 31.8291 / 60)) < 1e-12)
        #expect(abs(first.coordinate.longitude + (88 + 7.3033 / 60)) < 1e-12)
        #expect(abs(first.time.timeIntervalSince(try #require(Independent.time("2004-08-07T03:29:08.379Z")))) < 1e-6)
        #expect(abs(first.speed! - 0.17 * 1852 / 3600) < 1e-12)
        #expect(first.course == 138.92)
    }

    @Test func santaBarbaraSimulated() throws {
        let data = try Fixtures.data("tracks/santa_barbara_walking_tour.geojson")
        let simulation = try #require(TrackSimulation(speed: 1.4, interval: 1, start: Date(timeIntervalSince1970: 1_700_000_000)))
        let result = try TrackReader(simulation: simulation).read(data, source: "santa_barbara_walking_tour.geojson")
        let json = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        let geometry = ((json["features"] as! [[String: Any]])[0]["geometry"] as! [String: Any])
        let vertices = (geometry["coordinates"] as! [[Double]]).map { Coordinate(latitude: $0[1], longitude: $0[0]) }
        var length = 0.0
        for k in 1..<vertices.count { length += Geodesic.wgs84.distance(from: vertices[k - 1], to: vertices[k]) }
        let ticks = Int((length / 1.4).rounded(.down)) + 1
        #expect(result.updates.count == ticks + 1 || result.updates.count == ticks)
        #expect(result.updates.first?.coordinate == vertices.first)
        #expect(result.updates.last?.coordinate == vertices.last)
        #expect(result.updates.allSatisfy { $0.device == "santa_barbara_walking_tour" })
        for k in 1..<(result.updates.count - 1) {
            #expect(result.updates[k].time.timeIntervalSince(result.updates[k - 1].time) == 1)
        }
    }

    @Test func yellowstoneUntimedWouldSimulate() throws {
        let result = try TrackReader(device: "car").read(try Fixtures.data("yellowstone/yellowstone_grand_loop_road.gpx"),
                                                         source: "yellowstone_grand_loop_road.gpx")
        #expect(result.updates.allSatisfy { $0.device == "car" })
    }
}
