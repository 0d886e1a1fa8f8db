import Foundation
import PerimeterGeoJSON
import PerimeterTestSupport
import Testing

/// Numbers read by the JSON tokenizer (and so by the location reader) are the correctly rounded doubles
/// Swift's `Double(String)` gives, on the 17–19-digit decimals the 128-bit path reads and around it.
@Suite("JSON number rounding")
struct JSONNumberRoundingTests {
    static func read(_ text: String) -> Double? {
        var bytes = Array(text.utf8)
        return bytes.withUnsafeMutableBytes { raw -> Double? in
            var reader = JSONTokenReader(UnsafeRawBufferPointer(raw))
            return try? reader.readDouble()
        }
    }

    @Test func agreesWithDoubleFromStringOnRandomDecimals() {
        var random = SplitMix64(seed: 2024)
        var checked = 0
        for _ in 0..<40_000 {
            let digits = Int(random.next() % 20) + 1
            var text = ""
            for k in 0..<digits { text.append(Character(String((k == 0 ? 1 : 0) + Int(random.next() % (k == 0 ? 9 : 10))))) }
            let point = Int(random.next() % UInt64(digits + 1))
            var number = point == 0 ? "0." + text : String(text.prefix(point)) + (point < digits ? "." + text.dropFirst(point) : "")
            if random.next() % 4 == 0 { number += "e" + String(Int(random.next() % 41) - 20) }
            if random.next() % 2 == 0 { number = "-" + number }
            let expected = Double(number)
            let read = Self.read(number)
            #expect(read?.bitPattern == expected?.bitPattern, "\(number): \(String(describing: read)) vs \(String(describing: expected))")
            checked += 1
        }
        #expect(checked == 40_000)
    }

    /// Shortest round-trip texts of random doubles (what `Double.description` writes) read back exactly.
    @Test func roundTripsRandomDoubles() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<40_000 {
            let value = Double(bitPattern: random.next() & 0x3FFF_FFFF_FFFF_FFFF | 0x3000_0000_0000_0000) * (random.next() % 2 == 0 ? 1 : -1)
            guard value.isFinite else { continue }
            #expect(Self.read(value.description) == value, "\(value)")
            let coordinate = Double(random.next() % 360_000_000_000) / 1e9 - 180 + Double(random.next() % 1000) * 1e-15
            #expect(Self.read(coordinate.description) == coordinate, "\(coordinate)")
        }
    }

    /// Halfway cases: the remainder of the division decides.
    @Test func tiesAndNearTies() {
        for text in ["9007199254740993", "9007199254740993.0", "9007199254740993e0", "900719925474099.35e1",
                     "9007199254740994.5", "9007199254740995", "18014398509481985", "18014398509481986",
                     "0.30000000000000004", "0.1000000000000000055511151231257827", "0.10000000000000000555",
                     "0.10000000000000000556", "1.0000000000000002220446049250313080847263336181640625",
                     "1.00000000000000011102230246251565404236316680908203125", "1.00000000000000011102230246251565404",
                     "1.0000000000000001110223024625156540", "4.9406564584124654e-18", "1.7976931348623157e19",
                     "12345678901234567890", "1234567890123456789e-19", "9999999999999999999e19", "1e-19", "46.486405193062134"] {
            #expect(Self.read(text)?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
    }
}
