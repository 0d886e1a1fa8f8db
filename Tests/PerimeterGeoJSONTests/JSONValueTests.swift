import Foundation
import Testing
@testable import PerimeterGeoJSON

@Suite struct JSONValueTests {
    @Test func accessors() {
        let value: JSONValue = ["a": 1, "b": 2.5, "c": "x", "d": true, "e": nil, "f": [1, 2]]
        #expect(value["a"]?.int64Value == 1)
        #expect(value["a"]?.doubleValue == 1)
        #expect(value["b"]?.doubleValue == 2.5)
        #expect(value["b"]?.int64Value == nil)
        #expect(value["c"]?.stringValue == "x")
        #expect(value["d"]?.boolValue == true)
        #expect(value["e"]?.isNull == true)
        #expect(value["f"]?[1] == 2)
        #expect(value["f"]?[2] == nil)
        #expect(value["missing"] == nil)
        #expect(value["c"]?.doubleValue == nil)
        #expect(JSONValue.double(3.0).int64Value == 3)
    }

    @Test func exactIntegerSurvivesJSONDecoderAndParser() throws {
        let text = #"{"id":9007199254740993,"big":100000000000000000000,"neg":-9223372036854775808}"#
        let viaDecoder = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        let viaParser = try JSONParser().parse(text)
        for value in [viaDecoder, viaParser] {
            #expect(value["id"] == .integer(9_007_199_254_740_993))
            #expect(value["big"] == .double(1e20))
            #expect(value["neg"] == .integer(.min))
        }
        let encoded = try JSONEncoder().encode(viaParser)
        #expect(String(decoding: encoded, as: UTF8.self).contains("9007199254740993"))
        #expect(JSONWriter().string(viaParser).contains("9007199254740993"))
    }

    @Test func codableRoundTrip() throws {
        let value: JSONValue = ["s": "é\n\"", "n": nil, "t": true, "i": -5, "d": 0.1, "a": [[], [:]]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }
}
