import Foundation
import Testing
import PerimeterTestSupport
@testable import PerimeterGeoJSON

@Suite struct JSONParserTests {
    @Test func stringsAndEscapes() throws {
        let value = try JSONParser().parse(#"["a\"b\\c\/d\b\f\n\r\t", "\u00e9\u20AC", "\ud83d\ude00", "é😀", ""]"#)
        #expect(value == ["a\"b\\c/d\u{8}\u{c}\n\r\t", "é€", "😀", "é😀", ""])
    }

    @Test func numbers() throws {
        let value = try JSONParser().parse("[0, -0, 1.0, -1.5e3, 1E-2, 123456789012345678, 1e400, -1e400, 1e-400]")
        #expect(value == [.integer(0), .integer(0), .double(1.0), .double(-1500), .double(0.01),
                          .integer(123_456_789_012_345_678), .double(.infinity), .double(-.infinity), .double(0)])
    }

    @Test(arguments: [
        ("", "expected a JSON value, found end of input", 1, 1),
        ("[1,]", "expected a JSON value, found unexpected character ']'", 1, 4),
        ("{\"a\" 1}", "expected ':' after member name, found a number", 1, 6),
        ("[1 2]", "expected ',' or ']' in array, found a number", 1, 4),
        ("{\"a\":1,}", "expected a member name (string) in object, found unexpected character '}'", 1, 8),
        ("[01]", "invalid number: leading zeros are not allowed", 1, 2),
        ("[1.]", "invalid number: expected a digit after '.'", 1, 4),
        ("[-]", "invalid number: expected a digit", 1, 3),
        ("[1e+]", "invalid number: expected a digit in the exponent", 1, 5),
        ("[tru]", "invalid literal, expected 'true'", 1, 2),
        ("\n\n  [\"abc", "unterminated string", 3, 4),
        ("[\"a\tb\"]", "control character 0x9 in string must be escaped", 1, 4),
        ("[\"\\x\"]", "invalid escape '\\x' in string", 1, 3),
        ("[\"\\u12G4\"]", "invalid \\u escape: expected 4 hex digits", 1, 3),
        ("[\"\\ud800\"]", "unpaired UTF-16 surrogate in \\u escape", 1, 3),
        ("[\"\\udc00\"]", "unpaired UTF-16 surrogate in \\u escape", 1, 3),
        ("[1] 2", "expected end of input after the JSON value, found a number", 1, 5),
        ("[NaN]", "expected a JSON value, found unexpected character 'N'", 1, 2),
    ])
    func syntaxErrors(input: String, message: String, line: Int, column: Int) {
        #expect(throws: JSONParseError.self) { try JSONParser().parse(input) }
        do {
            _ = try JSONParser().parse(input)
        } catch {
            #expect(error.message == message)
            #expect(error.line == line)
            #expect(error.column == column)
        }
    }

    @Test func invalidUTF8IsAnErrorWithItsOffset() {
        for bytes: [UInt8] in [[0x22, 0x61, 0xC3, 0x28, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
                               [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22]] {
            #expect(throws: JSONParseError.self) { try JSONParser().parse(bytes) }
        }
        do {
            _ = try JSONParser().parse([0x22, 0x61, 0xC3, 0x28, 0x22])
        } catch {
            #expect(error.message == "invalid UTF-8 in string")
            #expect(error.offset == 2)
        }
    }

    @Test func depthLimit() throws {
        let deep = String(repeating: "[", count: 100_000)
        do {
            _ = try JSONParser().parse(deep)
            Issue.record("deep nesting accepted")
        } catch {
            #expect(error.message == "nesting deeper than 256 levels")
            #expect(error.offset == 256)
        }
        let ok = String(repeating: "[", count: 256) + String(repeating: "]", count: 256)
        #expect(throws: Never.self) { try JSONParser().parse(ok) }
    }

    /// Doubles: the parser must agree with Swift's correctly rounded `Double(String)` on random texts.
    @Test func doublesAgreeWithSwiftOnRandomTexts() throws {
        var rng = SplitMix64(seed: 42)
        let digits = Array("0123456789")
        for round in 0..<20_000 {
            var text: String
            if round % 2 == 0 {
                let bits = rng.next()
                let value = Double(bitPattern: bits)
                guard value.isFinite else { continue }
                text = round % 4 == 0 ? value.description : String(format: "%.17g", value)
            } else {
                text = Bool.random(using: &rng) ? "-" : ""
                let intDigits = Int.random(in: 1...22, using: &rng)
                text.append(Int.random(in: 1...9, using: &rng).description)
                for _ in 1..<intDigits { text.append(digits[Int.random(in: 0...9, using: &rng)]) }
                if Bool.random(using: &rng) {
                    text.append(".")
                    for _ in 0..<Int.random(in: 1...20, using: &rng) { text.append(digits[Int.random(in: 0...9, using: &rng)]) }
                }
                if Bool.random(using: &rng) { text.append("e\(Int.random(in: -340...310, using: &rng))") }
            }
            let parsed = try JSONParser().parse(text)
            let expected = try #require(Double(text))
            #expect(parsed.doubleValue == expected,
                    "\(text) parsed as \(parsed)")
            if let integer = Int64(text) { #expect(parsed == .integer(integer)) }
        }
    }

    /// Random JSON values: JSONParser and JSONDecoder must agree (numbers compared by value).
    @Test func agreesWithJSONDecoderOnRandomValues() throws {
        var rng = SplitMix64(seed: 7)
        for _ in 0..<300 {
            let value = randomJSON(&rng, depth: 0)
            let text = JSONWriter().string(value)
            let parsed = try JSONParser().parse(text)
            #expect(parsed == value)
            let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
            #expect(normalized(decoded) == normalized(parsed))
        }
    }
}

/// A random JSON value with finite numbers.
func randomJSON(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
    let pick = Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &rng)
    switch pick {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &rng))
    case 2: return .integer(Int64(bitPattern: rng.next()) >> Int64.random(in: 0...63, using: &rng))
    case 3:
        let value = Double(bitPattern: rng.next())
        return .double(value.isFinite ? value : 0.5)
    case 4:
        let scalars = (0..<Int.random(in: 0...8, using: &rng)).map { _ -> Character in
            let options: [Character] = ["a", "\"", "\\", "\n", "\u{1}", "é", "😀", "/", " ", "\u{7f}"]
            return options[Int.random(in: 0..<options.count, using: &rng)]
        }
        return .string(String(scalars))
    case 5: return .array((0..<Int.random(in: 0...4, using: &rng)).map { _ in randomJSON(&rng, depth: depth + 1) })
    default:
        var members: [String: JSONValue] = [:]
        for k in 0..<Int.random(in: 0...4, using: &rng) { members["k\(k)\(Int.random(in: 0...9, using: &rng))"] = randomJSON(&rng, depth: depth + 1) }
        return .object(members)
    }
}
