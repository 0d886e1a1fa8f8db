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
