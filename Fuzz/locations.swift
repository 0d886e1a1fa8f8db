// libFuzzer target: the body decoder of POST /v1/locations. The first byte's low bit says NDJSON; the
// rest is the body. The byte-level LocationBatchReader must agree with the tree path (JSONParser +
// LocationDecoder) on every body — same updates, rejections, paths, messages and problems — as its
// documentation promises. Needs `@testable` (the fuzz build uses -enable-testing). Run by Fuzz/fuzz.sh.
@testable import PerimeterServer

enum Outcome: Equatable {
    case batch(LocationBatch)
    case problem(Int, String, String)

    init(_ read: () throws(Problem) -> LocationBatch) {
        do throws(Problem) {
            self = .batch(try read())
        } catch {
            self = .problem(error.status, error.slug, error.detail)
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard size > 0, let data else { return 0 }
    let ndjson = data[0] & 1 == 1
    let body = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let reader = Outcome { () throws(Problem) in try LocationBatchReader.batch(body, ndjson: ndjson) }
    let tree = Outcome { () throws(Problem) in try LocationBatch.tree(body, ndjson: ndjson) }
    if reader != tree { fatalError("reader and tree path disagree (ndjson: \(ndjson)):\n\(reader)\n\(tree)") }
    return 0
}
