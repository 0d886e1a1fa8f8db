// libFuzzer target: every track reader. The first byte picks the format (each of TrackFormat.allCases,
// or detection from the bytes and a neutral file name); the rest is the file. Reading either succeeds or
// throws a TrackProblem-style error, never traps. Built and run by Fuzz/fuzz.sh.
import PerimeterTracks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard size > 0, let data else { return 0 }
    let formats = TrackFormat.allCases
    let choice = Int(data[0]) % (formats.count + 1)
    let format: TrackFormat? = choice < formats.count ? formats[choice] : nil
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    _ = try? TrackReader(format: format).read(bytes, source: format.map { "fuzz.\($0.rawValue)" } ?? "fuzz")
    return 0
}
