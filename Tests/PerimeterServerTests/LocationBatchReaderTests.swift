import Foundation
import PerimeterEngine
import PerimeterGeoJSON
@testable import PerimeterServer
import PerimeterTestSupport
import Testing

/// The byte-level location reader agrees with the tree path (``JSONParser`` + ``LocationDecoder``) on
/// every body: same updates, same rejections with the same pointers and messages, same problems.
@Suite("Location batch reader")
struct LocationBatchReaderTests {
    /// What reading a body gave: a batch, or a problem (status, slug, detail).
    enum Outcome: Equatable, CustomStringConvertible {
        case batch(LocationBatch)
        case problem(Int, String, String)

        init(_ read: () throws(Problem) -> LocationBatch) {
            do throws(Problem) {
                self = .batch(try read())
            } catch {
                self = .problem(error.status, error.slug, error.detail)
            }
        }

        var description: String {
            switch self {
            case .batch(let batch):
                "batch(count: \(batch.count), updates: \(batch.updates), origins: \(batch.origins), invalid: \(batch.invalid), broken: \(batch.broken), single: \(batch.isSingle))"
            case .problem(let status, let slug, let detail): "problem(\(status), \(slug), \(detail))"
            }
        }
    }

    /// How many updates, invalid items, broken lines and problems a series of outcomes held — so that a
    /// random series is known to exercise each.
    struct Tally {
        var updates = 0, invalid = 0, broken = 0, problems = 0

        mutating func add(_ outcome: Outcome) {
            switch outcome {
            case .batch(let batch):
                updates += batch.updates.count
                invalid += batch.invalid.count
                broken += batch.broken.count
            case .problem: problems += 1
            }
        }
    }

    static func both(_ body: String, ndjson: Bool) -> (reader: Outcome, tree: Outcome) {
        let bytes = Array(body.utf8)
        return (Outcome { () throws(Problem) in try LocationBatchReader.batch(bytes, ndjson: ndjson) },
                Outcome { () throws(Problem) in try LocationBatch.tree(bytes, ndjson: ndjson) })
    }

    // MARK: - Random bodies

    /// Random JSON text for location updates: valid ones in every form, and every kind of wrong one.
    struct Generator {
        var random: SplitMix64

        mutating func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
        mutating func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        mutating func space() -> String { chance(80) ? "" : pick([" ", "\t", "  ", "\r", " \n "]) }

        mutating func deviceID() -> String {
            pick([#""van-7""#, #""truck\"7""#, #""back\\slash""#, #""caf\u00e9""#, #""café""#, #""emoji \ud83d\ude00""#,
                  #""tab\tnew\nline""#, #""sl\/ash""#, "\"\(String(repeating: "x", count: 256))\"",
                  "\"d-\(random.next() % 50)\"", "\"d-\(random.next() % 50)\"", "\"d-\(random.next() % 50)\"",
                  // Wrong ones.
                  #""""#, "\"\(String(repeating: "y", count: 257))\"", "42", "null", "true", "[\"a\"]", #"{"id":"x"}"#])
        }

        mutating func number(in range: ClosedRange<Int>) -> String {
            let whole = Int(random.next() % UInt64(range.upperBound - range.lowerBound + 1)) + range.lowerBound
            let fraction = random.next() % 1_000_000_000_000_000
            return pick(["\(whole)", "\(whole).5", "\(whole).\(fraction)", "\(whole)e0", "\(whole)E+0", "\(whole)0e-1",
                         "\(whole).25e1", "0.\(fraction)", "-0", "-0.0", "0", "1E1", "4.4e-5",
                         "\(whole).12345678901234567890123"])
        }

        mutating func coordinate(_ limit: Int) -> String {
            chance(88) ? number(in: -limit...limit)
                : pick(["\(limit + 1)", "-\(limit).0001", "1e400", "-1e400", "\"44.6\"", "null", "true", "[]", "{}"])
        }

        mutating func time() -> String {
            pick([#""2025-03-26T17:19:33Z""#, #""2025-03-26T17:19:33.123+02:00""#, #""2024-02-29T00:00:00.5Z""#,
                  "1700000000", "1700000000.25", "17e8", "-5", "0",
                  // Wrong ones.
                  #""yesterday""#, #""2025-02-30T00:00:00Z""#, "1e999", "null", "false", "[1]", #""""#])
        }

        mutating func optionalNumber() -> String {
            pick(["5", "12.5", "0", "-0.0", "null", "1e2", "-3", "\"7\"", "true", "1e500", "{}"])
        }

        mutating func unknownValue() -> String {
            pick(["1", "\"x\"", "null", "[1,[2,[3]],{\"a\":{}}]", #"{"deviceId":"inner","latitude":1000}"#, "true", "-2.5e-3"])
        }

        /// One member, `"name": value`.
        mutating func member() -> String {
            let (name, value): (String, String) = switch random.next() % 16 {
            case 0, 1: ("deviceId", deviceID())
            case 2: (pick(["device", "device", #"device\u0049d"#]), deviceID())
            case 3, 4: ("latitude", coordinate(90))
            case 5, 6: ("longitude", coordinate(180))
            case 7, 8: ("time", time())
            case 9: (pick(["accuracy", "horizontalAccuracy", #"accur\u0061cy"#]), optionalNumber())
            case 10: ("speed", optionalNumber())
            case 11: ("course", optionalNumber())
            default: (pick(["extra", "Latitude", "deviceid", "lat", "", #"a\"b"#, "ünïcode", "timeInside"]), unknownValue())
            }
            return space() + "\"\(name)\"" + space() + ":" + space() + value + space()
        }

        /// One update: mostly complete and valid, sometimes with wrong, missing, repeated or extra members.
        mutating func item() -> String {
            if chance(3) { return pick(["42", "\"update\"", "null", "[]", "{}", "[{\"deviceId\":\"a\"}]"]) }
            var members: [String] = []
            if chance(85) {
                members = ["\"deviceId\":\"d-\(random.next() % 50)\"", "\"latitude\":" + number(in: -89...89),
                           "\"longitude\":" + number(in: -179...179), "\"time\":" + pick(["1700000000", "1700000000.5", #""2025-03-26T17:19:33Z""#])]
                if chance(50) { members.removeAll() }  // then random members only
            }
            for _ in 0..<(random.next() % 6) { members.append(member()) }
            if members.isEmpty { members.append(member()) }
            members.shuffle(using: &random)
            return space() + "{" + members.joined(separator: ",") + "}" + space()
        }

        /// A syntax error somewhere in `text` (an NDJSON line, or a whole array).
        mutating func breakSyntax(_ text: String) -> String {
            var bytes = Array(text.utf8)
            switch random.next() % 6 {
            case 0: return String(decoding: bytes.prefix(Int(random.next() % UInt64(max(bytes.count, 1)))), as: UTF8.self)
            case 1: return text + ","
            case 2: return text.replacingOccurrences(of: ":", with: "=")
            case 3: return "{" + text
            case 4:
                bytes.insert(0x01, at: Int(random.next() % UInt64(bytes.count + 1)))
                return String(decoding: bytes, as: UTF8.self)
            default: return text + " x"
            }
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func agreesWithTheTreePathOnRandomArraysAndObjects(seed: UInt64) {
        var generator = Generator(random: SplitMix64(seed: seed))
        var tally = Tally()
        for round in 0..<250 {
            var items: [String] = []
            for _ in 0..<(generator.random.next() % 12) { items.append(generator.item()) }
            var body: String
            switch round % 10 {
            case 0: body = generator.item()                         // one object
            case 1: body = generator.breakSyntax("[" + items.joined(separator: ",") + "]")
            case 2: body = "\u{FEFF}[" + items.joined(separator: ",") + "]"
            default: body = generator.space() + "[" + items.joined(separator: ",") + "]" + generator.space()
            }
            let (reader, tree) = Self.both(body, ndjson: false)
            #expect(reader == tree, "seed \(seed), round \(round): \(body)")
            tally.add(reader)
        }
        #expect(tally.updates > 200 && tally.invalid > 200 && tally.problems > 20, "\(tally)")
    }

    @Test(arguments: [11, 12, 13, 14, 15, 16, 17, 18] as [UInt64])
    func agreesWithTheTreePathOnRandomNDJSON(seed: UInt64) {
        var generator = Generator(random: SplitMix64(seed: seed))
        var tally = Tally()
        for round in 0..<250 {
            var lines: [String] = []
            for _ in 0..<(generator.random.next() % 12) {
                // Items may hold newlines between tokens; mostly keep each on one line.
                var item = generator.item()
                if generator.chance(90) { item = item.replacingOccurrences(of: "\n", with: " ") }
                switch generator.random.next() % 12 {
                case 0: lines.append(generator.pick(["", " ", "\t \t", "\r", " \r"]))
                case 1: lines.append(generator.breakSyntax(item))
                case 2: lines.append(item + "\r")
                case 3: lines.append("\u{FEFF}" + item)
                default: lines.append(item)
                }
            }
            let body = lines.joined(separator: generator.pick(["\n", "\r\n", "\n\n"])) + generator.pick(["", "\n", "\r\n"])
            let (reader, tree) = Self.both(body, ndjson: true)
            #expect(reader == tree, "seed \(seed), round \(round): \(body.debugDescription)")
            tally.add(reader)
        }
        #expect(tally.updates > 200 && tally.invalid > 200 && tally.broken > 50 && tally.problems > 0, "\(tally)")
    }

    // MARK: - Cases

    /// The bytes take the fast path: a batch of plain updates is not handed to the tree path.
    @Test func plainBatchesAreReadFromTheBytes() throws {
        let body = #"[{"deviceId":"a","latitude":1,"longitude":2,"time":3},{"latitude":-4.5,"deviceId":"b","time":"2025-03-26T17:19:33Z","longitude":6e1}]"#
        let batch = try #require(LocationBatchReader.read(Array(body.utf8), ndjson: false))
        #expect(batch.updates == [
            LocationUpdate(device: "a", time: Date(timeIntervalSince1970: 3), latitude: 1, longitude: 2),
            LocationUpdate(device: "b", time: RFC3339.date(from: "2025-03-26T17:19:33Z")!, latitude: -4.5, longitude: 60),
        ])
        #expect(batch.origins == [0, 1] && batch.count == 2 && !batch.isSingle)
        let single = try #require(LocationBatchReader.read(Array(#"{"deviceId":"a","latitude":1,"longitude":2,"time":3}"#.utf8), ndjson: false))
        #expect(single.isSingle && single.updates.count == 1)
    }

    @Test func numbersInEveryJSONForm() throws {
        let forms: [(String, Double)] = [("0", 0), ("-0", 0), ("-0.0", -0.0), ("7", 7), ("-12", -12), ("1.5", 1.5), ("-0.25", -0.25),
                                         ("1e1", 10), ("1E+1", 10), ("25e-1", 2.5), ("0.5E0", 0.5),
                                         ("42.431535067653854", 42.431535067653854),
                                         ("44.123456789012345678901234", 44.123456789012345678901234),
                                         ("1700000000", 1_700_000_000)]
        for (text, expected) in forms {
            let body = #"{"deviceId":"n","latitude":"# + (abs(expected) <= 90 ? text : "0")
                + #","longitude":0,"time":"# + (expected >= 0 ? text : "0") + #","speed":"# + text + "}"
            let batch = try #require(LocationBatchReader.read(Array(body.utf8), ndjson: false), "\(text)")
            let update = try #require(batch.updates.first)
            #expect(update.speed == expected && update.speed?.sign == expected.sign, "\(text)")
            #expect(update.time == Date(timeIntervalSince1970: expected >= 0 ? expected : 0), "\(text)")  // times before 1970 are refused
            if abs(expected) <= 90 { #expect(update.coordinate.latitude == expected, "\(text)") }
            let (reader, tree) = Self.both(body, ndjson: false)
            #expect(reader == tree, "\(text)")
        }
    }

    @Test func escapesInDeviceIDsAndMemberNames() throws {
        let body = #"[{"deviceId":"a\"b\\c\/d\u00e9\ud83d\ude00","latitude":1,"longitude":2,"time":3},"#
            + #"{"device\u0049d":"escaped-name","l\u0061titude":1,"longitude":2,"time":3},"#
            + #"{"deviceId":"control\n","latitude":1,"longitude":2,"time":3}]"#
        let batch = try LocationBatchReader.batch(Array(body.utf8), ndjson: false)
        // An escaped control character decodes, and makes the id invalid (RequestID): that item is rejected.
        #expect(batch.updates.map(\.device.rawValue) == ["a\"b\\c/dé😀", "escaped-name"])
        #expect(batch.invalid.map(\.index) == [2])
        let (reader, tree) = Self.both(body, ndjson: false)
        #expect(reader == tree)
    }

    @Test func unknownMembersAreIgnoredAndARepeatedNameKeepsItsLastValue() throws {
        let body = #"{"deviceId":"first","x":{"deviceId":"inner","y":[1,{"z":null}]},"latitude":"bad","latitude":3,"#
            + #""longitude":2,"time":3,"deviceId":"last","device":"alias","accuracy":null,"horizontalAccuracy":5}"#
        let batch = try #require(LocationBatchReader.read(Array(body.utf8), ndjson: false))
        let update = try #require(batch.updates.first)
        #expect(update.device == "last" && update.coordinate.latitude == 3)
        #expect(update.horizontalAccuracy == nil, "accuracy (null) wins over horizontalAccuracy")
        let (reader, tree) = Self.both(body, ndjson: false)
        #expect(reader == tree)
        // A later wrong value wins too, and is reported as the decoder reports it.
        let wrong = #"[{"deviceId":"a","latitude":3,"longitude":2,"time":3,"latitude":"x"}]"#
        let result = Self.both(wrong, ndjson: false)
        #expect(result.reader == result.tree)
        guard case .batch(let refused) = result.reader else { Issue.record("no batch"); return }
        #expect(refused.invalid.map(\.failure.path.jsonPointer) == ["/0/latitude"])
        #expect(refused.invalid.map(\.failure.message) == ["latitude must be a finite number"])
    }

    @Test func ndjsonWithCRLFBlankLinesAndBrokenLines() throws {
        let body = "\r\n" + #"{"deviceId":"a","latitude":1,"longitude":2,"time":3}"# + "\r\n \t\r\n\n"
            + "{\"deviceId\":\"b\",\"latitude\":1,\"longitude\":2,\"time\":3}\r\r\n{broken\r\n"
            + #"{"deviceId":"c","latitude":100,"longitude":2,"time":3}"# + "\n"
            + #"{"deviceId":"d","latitude":1,"longitude":2,"time":4}"#
        let batch = try #require(LocationBatchReader.read(Array(body.utf8), ndjson: true))
        #expect(batch.updates.map(\.device) == ["a", "b", "d"])
        #expect(batch.origins == [0, 1, 4])
        #expect(batch.broken.map(\.index) == [2])
        #expect(batch.broken.first?.document["line"] == 6)
        #expect(batch.invalid.map(\.failure.path.jsonPointer) == ["/3/latitude"])
        let (reader, tree) = Self.both(body, ndjson: true)
        #expect(reader == tree)
        // Nothing but blank lines: the same problem as before.
        let blank = Self.both("\n \r\n\t\n", ndjson: true)
        #expect(blank.reader == blank.tree)
        #expect(blank.reader == .problem(400, "empty-body", "the NDJSON body holds no update"))
    }

    @Test func bodiesThatAreNotArraysOfUpdatesGetTheSameAnswers() {
        for body in ["", " ", "[", "[]", "[] x", "42", "\"x\"", "null", "{}", "[1,2]", "{\"deviceId\":1}", "[{}, {]",
                     "[{\"deviceId\":\"a\",\"latitude\":1,\"longitude\":2,\"time\":3},]", "\u{FEFF}[]", "[[[[[]]]]]",
                     String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
                     "[{\"deviceId\":\"a\",\"x\":" + String(repeating: "[", count: 254) + String(repeating: "]", count: 254) + "}]",
                     "[{\"deviceId\":\"a\",\"x\":" + String(repeating: "[", count: 255) + String(repeating: "]", count: 255) + "}]"] {
            let (reader, tree) = Self.both(body, ndjson: false)
            #expect(reader == tree, "\(body.prefix(80))")
            let lines = Self.both(body, ndjson: true)
            #expect(lines.reader == lines.tree, "NDJSON \(body.prefix(80))")
        }
    }
}
