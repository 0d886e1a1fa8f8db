// libFuzzer target: RFC 3339 timestamps. Any text either parses or not, never traps; a parsed date
// formats to text that parses back to the same instant (to the millisecond the format keeps) whenever
// the formatted year is one RFC 3339 can write (0000–9999). Built and run by Fuzz/fuzz.sh.
import Foundation
import PerimeterGeoJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    let text = String(decoding: bytes, as: UTF8.self)
    guard let date = RFC3339.date(from: text) else { return 0 }
    let formatted = RFC3339.string(from: date)
    let year = formatted.prefix(while: { $0 != "-" })
    guard year.count == 4, year.allSatisfy(\.isASCII) else { return 0 }
    guard let again = RFC3339.date(from: formatted) else {
        fatalError("'\(text)' parsed, but its formatting '\(formatted)' does not")
    }
    guard abs(again.timeIntervalSince1970 - date.timeIntervalSince1970) <= 0.0005 + 1e-9 * abs(date.timeIntervalSince1970) else {
        fatalError("'\(text)' → \(date.timeIntervalSince1970) → '\(formatted)' → \(again.timeIntervalSince1970)")
    }
    return 0
}
