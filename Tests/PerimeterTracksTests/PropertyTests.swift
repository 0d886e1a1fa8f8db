import Foundation
import Testing
import PerimeterEngine
import PerimeterGeometry
import PerimeterTestSupport
@testable import PerimeterTracks

@Suite struct TimeTests {
    @Test(arguments: [
        ("2020-01-02T03:04:05Z", 1_577_934_245.0),
        ("2020-01-02 03:04:05", 1_577_934_245.0),
        ("2020-01-02T03:04:05.25+01:00", 1_577_930_645.25),
        ("2020-01-02T03:04:05-0130", 1_577_939_645.0),
        ("2019-01-25 20:00:16.178999901", 1_548_446_416.178999901),
        ("1577934245", 1_577_934_245.0),
        ("1577934245123", 1_577_934_245.123),
        ("1577934245123456", 1_577_934_245.123456),
    ])
    func parses(_ text: String, _ expected: Double) throws {
        let date = try #require(TrackTime.parse(text))
        #expect(abs(date.timeIntervalSince1970 - expected) < 1e-6)
    }

    @Test(arguments: ["", "2020-01-02", "2020-02-30T00:00:00Z", "2020-01-02T25:00:00Z", "2020-01-02T03:04:05Q", "nan", "inf", "0x10", "2020-01-02T03:04:05.Z"])
    func rejects(_ text: String) {
        #expect(TrackTime.parse(text) == nil)
    }

    /// Random instants formatted by Calendar must parse back to themselves.
    @Test func randomInstantsAgainstCalendar() throws {
        var rng = SplitMix64(seed: 42)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        for _ in 0..<2000 {
            let seconds = Double(Int64.random(in: -2_000_000_000...4_000_000_000, using: &rng))
            let date = Date(timeIntervalSince1970: seconds)
            let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
            let offsetMinutes = Int.random(in: -720...720, using: &rng) / 15 * 15
            let local = date.addingTimeInterval(Double(offsetMinutes * 60))
            let l = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: local)
            let zone = offsetMinutes == 0 ? "Z" : String(format: "%@%02d:%02d", offsetMinutes < 0 ? "-" : "+", abs(offsetMinutes) / 60, abs(offsetMinutes) % 60)
            let text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", l.year!, l.month!, l.day!, l.hour!, l.minute!, l.second!) + zone
            #expect(TrackTime.iso8601(text) == date, "\(text) \(c)")
        }
    }
}

@Suite struct CSVPropertyTests {
    /// Random records written as CSV with a random separator, column order, aliases and quoting read back exactly.
    @Test func randomTablesRoundTrip() throws {
        var rng = SplitMix64(seed: 7)
        let names: [FieldRole: [String]] = [.device: ["device_id", "User_ID", "id"], .time: ["timestamp", "tracked_at", "Time"],
                                            .latitude: ["lat", "Latitude", "y"], .longitude: ["lng", "LONGITUDE", "x"],
                                            .accuracy: ["accuracy", "hAcc", "horizontal_accuracy"]]
        for _ in 0..<200 {
            let separator = [",", ";", "\t"].randomElement(using: &rng)!
            let roles = [FieldRole.device, .time, .latitude, .longitude, .accuracy].shuffled(using: &rng)
            var text = roles.map { names[$0]!.randomElement(using: &rng)! }.joined(separator: separator) + (Bool.random(using: &rng) ? "\r\n" : "\n")
            var expected = [LocationUpdate]()
            for _ in 0..<Int.random(in: 0...20, using: &rng) {
                let update = LocationUpdate(device: DeviceID(["a", "b;c", "d,\"e\"", "f\tg"].randomElement(using: &rng)!),
                                            time: Date(timeIntervalSince1970: Double(Int.random(in: 0...2_000_000_000, using: &rng))),
                                            latitude: Double.random(in: -90...90, using: &rng), longitude: Double.random(in: -180...180, using: &rng),
                                            horizontalAccuracy: Double(Int.random(in: 0...100, using: &rng)))
                expected.append(update)
                let fields = roles.map { role -> String in
                    switch role {
                    case .device:
                        let raw = update.device.rawValue
                        return "\"" + raw.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                    case .time: return Bool.random(using: &rng) ? String(Int(update.time.timeIntervalSince1970)) : ISO8601DateFormatter().string(from: update.time)
                    case .latitude: return "\(update.coordinate.latitude)"
                    case .longitude: return "\(update.coordinate.longitude)"
                    default: return "\(update.horizontalAccuracy!)"
                    }
                }
                text += fields.joined(separator: separator) + "\n"
            }
            let result = try TrackReader(format: .csv).read(Array(text.utf8), source: "t.csv")
            #expect(result.warnings.isEmpty, "\(result.warnings)")
            #expect(result.updates == expected)
        }
    }
}

@Suite struct SimulationTests {
    @Test func rejectsNonPositiveParameters() {
        #expect(TrackSimulation(speed: 0) == nil)
        #expect(TrackSimulation(speed: .nan) == nil)
        #expect(TrackSimulation(speed: 1, interval: 0) == nil)
        #expect(TrackSimulation(speed: 1, interval: -1) == nil)
    }

    /// Against a brute force: every tick's position lies on the path at distance speed·t, found by walking
    /// the segments again.
    @Test func randomPathsAgainstBruteForce() throws {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<50 {
            let speed = Double.random(in: 5...50, using: &rng), interval = Double.random(in: 0.5...5, using: &rng)
            var path = [Coordinate(latitude: Double.random(in: -60...60, using: &rng), longitude: Double.random(in: -170...170, using: &rng))]
            for _ in 0..<Int.random(in: 0...6, using: &rng) {
                let p = path.last!
                path.append(Coordinate(latitude: p.latitude + Double.random(in: -0.01...0.01, using: &rng),
                                       longitude: p.longitude + Double.random(in: -0.01...0.01, using: &rng)))
            }
            let simulation = try #require(TrackSimulation(speed: speed, interval: interval, start: Date(timeIntervalSince1970: 1000)))
            let updates = try simulation.simulate(path: path, device: "d")
            var lengths = [Double]()
            for k in 1..<max(1, path.count) { lengths.append(Geodesic.wgs84.distance(from: path[k - 1], to: path[k])) }
            let total = lengths.reduce(0, +)
            #expect(updates.first?.coordinate == path.first)
            #expect(updates.last?.coordinate == path.last)
            #expect(abs(updates.last!.time.timeIntervalSince1970 - 1000 - total / speed) < 1e-6)
            for (k, update) in updates.enumerated() where k < updates.count - 1 || path.count == 1 {
                let t = update.time.timeIntervalSince1970 - 1000
                #expect(abs(t - Double(k) * interval) < 1e-6)
                var remaining = t * speed, segment = 0
                while segment < lengths.count - 1, remaining > lengths[segment] { remaining -= lengths[segment]; segment += 1 }
                guard !lengths.isEmpty else { continue }
                let f = lengths[segment] > 0 ? min(1, remaining / lengths[segment]) : 0
                let a = path[segment], b = path[segment + 1]
                #expect(abs(update.coordinate.latitude - (a.latitude + f * (b.latitude - a.latitude))) < 1e-9)
                #expect(abs(update.coordinate.longitude - (a.longitude + f * (b.longitude - a.longitude))) < 1e-9)
            }
        }
    }

    @Test func simulatesUntimedGPXAndRetimesUpdates() throws {
        let gpx = "<gpx><rte><rtept lat=\"0\" lon=\"0\"/><rtept lat=\"0\" lon=\"0.001\"/></rte></gpx>"
        let simulation = try #require(TrackSimulation(speed: 10, interval: 2, start: Date(timeIntervalSince1970: 0)))
        let result = try TrackReader(simulation: simulation).read(Array(gpx.utf8), source: "dir/route.gpx")
        let length = Geodesic.wgs84.distance(from: Coordinate(latitude: 0, longitude: 0), to: Coordinate(latitude: 0, longitude: 0.001))
        #expect(result.updates.count == Int(length / 10 / 2) + 2)
        #expect(result.updates.allSatisfy { $0.device == "route" && $0.speed == 10 && $0.course == 90 })
        let again = try simulation.simulate(result.updates)
        #expect(again.map(\.time) == result.updates.map(\.time))
        for (a, b) in zip(again, result.updates) { #expect(abs(a.coordinate.longitude - b.coordinate.longitude) < 1e-12) }
    }

    @Test func refusesAbsurdlyManyUpdates() throws {
        let simulation = try #require(TrackSimulation(speed: 1e-6, interval: 1e-3))
        #expect(throws: TrackProblem.self) {
            try simulation.simulate(path: [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 90)], device: "d")
        }
    }
}
