import Foundation

/// `perimeter study noise|sparse`: the detection-quality studies, printed as Markdown (docs/studies.md).
struct StudyCommand {
    static let help = """
    Usage: perimeter study noise|sparse [--fixtures DIR]

    Runs a detection-quality study on the shared reference fixtures and prints a Markdown table.

      noise    A fence boundary through the cloud of a stationary receiver's fixes
               (stationary_jitter.gpx) and of a phone log with accuracies (google_trajectory.csv):
               transitions and events per hour, raw and with each noise option.
      sparse   One drive at 1 s and at 60 s through small fences: visits missed without crossings,
               recovered with them, and entry/exit timing error with and without interpolation.

    Options:
      --fixtures DIR   The fixtures folder (default: $PERIMETER_FIXTURES, else ../shared/fixtures).
      -h, --help       Show this help.
    """

    static func run(_ arguments: [String], console: Console) throws -> Int32 {
        var args = Arguments(arguments, command: "study")
        if args.wantsHelp() {
            console.print(help)
            return 0
        }
        let environment = ProcessInfo.processInfo.environment["PERIMETER_FIXTURES"].flatMap { $0.isEmpty ? nil : $0 }
        let fixtures = try args.option("fixtures") ?? environment ?? "../shared/fixtures"
        let names = try args.positionals()
        guard names.count == 1, let name = names.first, name == "noise" || name == "sparse" else {
            throw CommandLineError.usage("study: name one study, noise or sparse (see 'perimeter study --help')")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: fixtures, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw CommandLineError.noInput("study: fixtures folder '\(fixtures)' does not exist (use --fixtures DIR)")
        }
        if name == "noise" {
            console.print(NoiseStudy.markdown(try NoiseStudy.run(fixtures: fixtures)))
        } else {
            console.print(SparseFixStudy.markdown(try SparseFixStudy.run(fixtures: fixtures)))
        }
        return 0
    }
}
