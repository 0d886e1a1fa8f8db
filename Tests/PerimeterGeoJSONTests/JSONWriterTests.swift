import Testing
import PerimeterTestSupport
@testable import PerimeterGeoJSON

@Suite struct JSONWriterTests {
    @Test func compactSortedAndEscaped() {
        let value: JSONValue = ["b": [1, 2.5, nil, true], "a": "q\"\\\n\u{1}é/", "é": 0.1, "Z": [:]]
        #expect(JSONWriter().string(value) == #"{"Z":{},"a":"q\"\\\n\u0001é/","b":[1,2.5,null,true],"é":0.1}"#)
    }

    @Test func doubles() {
        let value: JSONValue = [.double(100), .double(-0.0), .double(1e-5), .double(5e20), .double(.nan), .double(-.infinity),
                                .integer(9_007_199_254_740_993)]
        #expect(JSONWriter().string(value) == "[100.0,0.0,1e-05,5e+20,null,null,9007199254740993]")
    }

    /// The writer's fast path for short decimals writes exactly what `description` writes, on coordinates
    /// of 0–7 decimals (the fast path's values), on the edges of its range, and on values it must refuse.
    @Test func shortDecimalsAreWrittenAsDescriptionWritesThem() {
        var rng = SplitMix64(seed: 7)
        var values: [Double] = [0.001, -0.001, 0.0011, 0.1, 0.5, 1, 10, 100, 99_999_999.999_999_9, 12_345_678.123_456_7,
                                0.000_999_9, 1e8, 1e-7, 123.456_789_01, 0.3, 2.675, 1.005, 180, -180, 90, 0.1 + 0.2]
        for _ in 0..<100_000 {
            let digits = Int.random(in: 0...8, using: &rng)
            let scale = [1.0, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8][digits]
            let integer = Double(Int64.random(in: -2_000_000_000...2_000_000_000, using: &rng))
            values.append(integer / scale)
            values.append(Double.random(in: -200...200, using: &rng))
            values.append(Double(bitPattern: UInt64.random(in: 0x3F40_0000_0000_0000...0x4197_D784_0000_0000, using: &rng)))
        }
        for value in values {
            var fast: [UInt8] = []
            let taken = JSONWriter.appendShortDecimal(value, to: &fast)
            if taken { #expect(String(decoding: fast, as: UTF8.self) == value.description, "\(value)") }
            var written: [UInt8] = []
            JSONWriter().write(.double(value), into: &written)
            #expect(String(decoding: written, as: UTF8.self) == JSONWriter.format(value), "\(value)")
        }
        // It is taken for the common coordinates, and refused outside its range.
        var scratch: [UInt8] = []
        #expect(JSONWriter.appendShortDecimal(48.716_921_4, to: &scratch))
        #expect(!JSONWriter.appendShortDecimal(1e-4, to: &scratch))
        #expect(!JSONWriter.appendShortDecimal(1e8, to: &scratch))
        #expect(!JSONWriter.appendShortDecimal(0.123_456_789, to: &scratch))
        #expect(!JSONWriter.appendShortDecimal(.nan, to: &scratch))
        #expect(!JSONWriter.appendShortDecimal(0, to: &scratch))
    }

    @Test func unsortedWriterWritesEveryMember() throws {
        let value: JSONValue = ["x": 1, "y": 2, "z": 3]
        let text = JSONWriter(options: .init(sortedKeys: false)).string(value)
        #expect(try JSONParser().parse(text) == value)
    }

    @Test func randomValuesRoundTripExactly() throws {
        var rng = SplitMix64(seed: 99)
        for _ in 0..<500 {
            let value = randomJSON(&rng, depth: 0)
            let text = JSONWriter().string(value)
            #expect(try JSONParser().parse(text) == value, "\(text)")
            #expect(JSONWriter().string(try JSONParser().parse(text)) == text)
        }
    }
}
