// perimeter-bench: benchmarks Perimeter against Shapely, PostGIS and the C yardstick. Only composes;
// everything lives in PerimeterBenchmarks. See docs/benchmarks.md.
import Foundation
import PerimeterBenchmarks

let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
    ?? URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
exit(BenchRunner.main(arguments: Array(CommandLine.arguments.dropFirst()), executable: executable))
