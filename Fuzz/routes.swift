// libFuzzer target: path routing, through the most stable public entry — the whole in-process handler
// (PerimeterAPI.handle) — so it survives the rework of routing. The input is a request target
// (`/path?query`); each method is tried on it with an empty body. Built and run by Fuzz/fuzz.sh with
// Request.swift.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    let target = String(decoding: bytes, as: UTF8.self)
    for method in FuzzAPI.methods {
        FuzzAPI.check(FuzzAPI.request(method: method, target: target), on: FuzzAPI.shared)
    }
    return 0
}
