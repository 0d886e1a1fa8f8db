// libFuzzer target: the GeoJSON reader (and the JSON parser under it) on arbitrary bytes.
//
// Besides "never trap", it checks what a reader must always do on any input: a missing object is
// explained by an error, every problem points inside the input and says something, and a document the
// JSON parser rejects never yields an object. Built and run by Fuzz/fuzz.sh (docs/reliability.md).
import PerimeterGeoJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    let result = GeoJSONReader(options: .init(maxDepth: 64)).read(bytes)
    if result.object == nil, !result.hasErrors { fatalError("no object and no error") }
    for problem in result.problems {
        guard problem.line >= 1, problem.column >= 1, problem.offset <= bytes.count, !problem.message.isEmpty else {
            fatalError("problem out of bounds or empty: \(problem)")
        }
    }
    if (try? JSONParser(maxDepth: 64).parse(bytes)) == nil, result.object != nil {
        fatalError("an object from text the JSON parser rejects")
    }
    return 0
}
