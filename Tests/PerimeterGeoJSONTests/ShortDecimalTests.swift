import Foundation
import PerimeterTestSupport
import Testing
@testable import PerimeterGeoJSON

/// The reader's one-pass path for common numbers and positions (`readShortDecimal`, `readShortDecimalPair`)
/// must give exactly what the general path gives: the same bits, the same bytes consumed, the same
/// problems, and nothing consumed when it declines.
@Suite struct ShortDecimalTests {
    /// What `readDouble` gave before the one-pass path: `readNumber`, integers converted.
    static func general(_ bytes: [UInt8]) -> (bits: UInt64, consumed: Int)? {
        bytes.withUnsafeBufferPointer { buffer -> (UInt64, Int)? in
            var s = JSONScanner(base: buffer.baseAddress!, count: buffer.count, maxDepth: 8)
            switch try? s.readNumber() {
            case .integer(let value)?: return (Double(value).bitPattern, s.index)
            case .double(let value)?: return (value.bitPattern, s.index)
            case nil: return nil
            }
        }
    }

    static func short(_ bytes: [UInt8]) -> (value: Double?, consumed: Int) {
        bytes.withUnsafeBufferPointer { buffer in
            var s = JSONScanner(base: buffer.baseAddress!, count: buffer.count, maxDepth: 8)
            let value = s.readShortDecimal()
            return (value, s.index)
        }
    }

    /// Number texts of every shape near the path's limits: 1–22 digits, leading zeros, fractions of 0–20
    /// digits, exponents, a lone minus or dot, values around 2^53, and what may follow a number.
    static func randomNumber(_ random: inout SplitMix64) -> String {
        func digits(_ n: Int) -> String { String((0..<n).map { _ in Character(String(random.next() % 10)) }) }
        var text = random.next() % 3 == 0 ? "-" : ""
        switch random.next() % 10 {
        case 0: text += ["0", "00", "01", "", ".5", "0.", "9007199254740992", "9007199254740993", "9007199254740991.5",
                         "1234567890123456789", "12345678901234567890", "0.0000000000000000001", "4.5e1", "4.5E-1", "1e"]
                    .randomElement(using: &random)!
        case 1: text += digits(Int(random.next() % 23))
        default:
            let integer = Int(random.next() % 4)
            text += integer == 0 ? "0" : String(1 + random.next() % 9) + digits(integer - 1)
            if random.next() % 8 != 0 { text += "." + digits(Int(random.next() % 21)) }
            if random.next() % 10 == 0 { text += (random.next() % 2 == 0 ? "e" : "E") + (random.next() % 2 == 0 ? "-" : "") + digits(1 + Int(random.next() % 3)) }
        }
        return text + [",", "]", "", " ", "x", ".", "e"].randomElement(using: &random)!
    }

    @Test func theOnePassNumberIsTheGeneralOneOrDeclines() {
        var random = SplitMix64(seed: 1815)
        var taken = 0
        for _ in 0..<200_000 {
            let text = Self.randomNumber(&random)
            let bytes = Array(text.utf8)
            let (value, consumed) = Self.short(bytes)
            guard let value else {
                #expect(consumed == 0, "\(text): declined but consumed \(consumed)")
                continue
            }
            taken += 1
            guard let expected = Self.general(bytes) else {
                Issue.record("\(text): read as \(value), where the general path refuses it")
                continue
            }
            #expect(value.bitPattern == expected.bits, "\(text): \(value) against \(Double(bitPattern: expected.bits))")
            #expect(consumed == expected.consumed, "\(text)")
        }
        #expect(taken > 80_000, "the common forms take the one-pass path")
    }

    @Test func coordinatesAsFilesWriteThemTakeTheOnePassPath() {
        for text in ["0.5972479", "-110.6", "48.7169214", "0", "-0", "-0.0", "180", "90.0000000", "12345678.9012345"] {
            let (value, consumed) = Self.short(Array(text.utf8))
            #expect(value != nil && consumed == text.utf8.count, "\(text)")
            #expect(value?.bitPattern == Self.general(Array(text.utf8))?.bits, "\(text)")
        }
        #expect(Self.short(Array("-0".utf8)).value?.sign == .plus, "an integer -0 reads as 0, as before")
        #expect(Self.short(Array("-0.0".utf8)).value?.sign == .minus)
    }

    /// A polygon whose positions are written in the common form, and the same values written so that
    /// every position takes the general path (exponents, three numbers, spaces before commas): the two
    /// must read to the same geometry with the same problems.
    @Test func positionsReadTheSameWhicheverPath() {
        var random = SplitMix64(seed: 2026)
        for round in 0..<400 {
            var fast: [String] = [], slow: [String] = []
            let n = 4 + Int(random.next() % 12)
            var ring: [(String, String)] = []
            for k in 0..<(n - 1) {
                // Mostly valid; sometimes out of range (a warning or an error), sometimes odd spacing.
                let lon = random.next() % 40 == 0 ? "\(181 + k)" : random.next() % 60 == 0 ? "-600.5" : String(format: "%.7f", Double(Int64(random.next() % 3_600_000_000)) / 1e7 - 180)
                let lat = random.next() % 50 == 0 ? "90.5" : String(format: "%.7f", Double(Int64(random.next() % 1_800_000_000)) / 1e7 - 90)
                ring.append((lon, lat))
            }
            if round % 7 != 0 { ring.append(ring[0]) } else { ring.append(("1", "2")) }  // sometimes not closed
            for (lon, lat) in ring {
                fast.append(random.next() % 4 == 0 ? "[ \(lon) ,\n\(lat) ]" : "[\(lon),\(lat)]")
                slow.append("[\(lon)e0 ,\(lat)E+0]")
            }
            func read(_ positions: [String]) -> GeoJSONReadResult {
                fastRead(#"{"type":"Feature","id":1,"properties":{},"geometry":{"type":"Polygon","coordinates":[["# + positions.joined(separator: ",") + "]]}}")
            }
            let a = read(fast), b = read(slow)
            #expect(a.object == b.object, "round \(round)")
            #expect(a.problems.map { "\($0.severity) \($0.path) \($0.message)" } == b.problems.map { "\($0.severity) \($0.path) \($0.message)" },
                    "round \(round)")
        }
    }
}
