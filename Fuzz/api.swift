// libFuzzer target: the whole request handler in process. The input is one or more requests, each a
// small HTTP-like text, separated by lines holding only `%%`:
//
//     METHOD /path?query
//     header-name: value        (any number of lines)
//                                (an empty line)
//     body bytes
//
// handled in order by one API for the whole run. A fresh service per input would make every crash
// replay from its input alone, but costs its threads: 30 inputs/s instead of 1,000. So state accumulates
// as on a real server, and an input carries the requests a finding needs (a fence put by its first
// request is there for the second). fuzz.sh runs this target without LeakSanitizer: what the shared
// service still holds at exit is reported as leaked, since LSan cannot follow Swift's pointers that carry
// enum tags in their spare bits. The seeds are readable requests (Fuzz/corpus/api). Built and run
// by Fuzz/fuzz.sh with Request.swift.
import PerimeterHTTP

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    let separator = Array("\n%%\n".utf8)
    var requests: [ArraySlice<UInt8>] = []
    var start = 0, index = 0
    while index + separator.count <= bytes.count {
        if bytes[index..<index + separator.count].elementsEqual(separator) {
            requests.append(bytes[start..<index])
            index += separator.count
            start = index
        } else {
            index += 1
        }
    }
    requests.append(bytes[start...])
    for request in requests.prefix(8) {
        if let request = parse(request) { FuzzAPI.check(request, on: FuzzAPI.shared) }
    }
    return 0
}

/// The request in `bytes`: request line and headers up to the first empty line, then the body.
func parse(_ bytes: ArraySlice<UInt8>) -> HTTPRequest? {
    var lines: [String] = []
    var index = bytes.startIndex
    while index < bytes.endIndex {
        let end = bytes[index...].firstIndex(of: 10) ?? bytes.endIndex
        var line = bytes[index..<end]
        if line.last == 13 { line = line.dropLast() }
        index = min(end + 1, bytes.endIndex)
        if line.isEmpty { break }
        lines.append(String(decoding: line, as: UTF8.self))
    }
    guard let first = lines.first else { return nil }
    let requestLine = first.split(separator: " ", maxSplits: 1)
    guard requestLine.count == 2 else { return nil }
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
        let field = line.split(separator: ":", maxSplits: 1)
        if field.count == 2 { headers[field[0].lowercased()] = String(field[1].drop(while: { $0 == " " })) }
    }
    return FuzzAPI.request(method: String(requestLine[0]), target: String(requestLine[1]), headers: headers,
                           body: Array(bytes[index...]))
}
