import PerimeterFences

/// `perimeter validate`: every problem in a fence file, one per line.
struct ValidateCommand {
    static let help = """
    Usage: perimeter validate FILE [--strict] [--radius METRES]

    Checks a GeoJSON fence file and prints every problem with the feature, its id and the JSON path:
    syntax errors, bad coordinates, unclosed rings, unknown types, duplicate ids, bad property values
    (errors); self-intersecting rings, Point, MultiPoint and line fences that set no radius and get the
    default, and other suspicious input (warnings: the fence is still used, see docs/fences.md). Exits 1
    when there are errors.

    Options:
      --strict          Count warnings as errors.
      --radius METRES   Default radius for Point, MultiPoint and line fences (default 300, as
                        'perimeter replay' and the service).
      -h, --help        Show this help.
    """

    var path: String
    var strict: Bool
    var radius: Double

    init?(_ arguments: [String]) throws {
        var args = Arguments(arguments, command: "validate")
        if args.wantsHelp() { return nil }
        strict = args.flag("strict")
        radius = try args.number("radius", in: 0.001...20_037_508) ?? FenceLoader.Options.mapboxDefaultRadius
        let files = try args.positionals()
        guard files.count == 1 else {
            throw CommandLineError.usage("validate: give exactly one fence file (see 'perimeter validate --help')")
        }
        path = files[0]
    }

    static func run(_ arguments: [String], console: Console) throws -> Int32 {
        guard let command = try ValidateCommand(arguments) else {
            console.print(help)
            return 0
        }
        let file = try InputFiles.fences(command.path, options: FenceLoader.Options(defaultRadius: command.radius, strict: command.strict))
        for line in file.errors + file.warnings { console.print(line) }
        let summary = "\(command.path): \(file.fences.count) fence\(file.fences.count == 1 ? "" : "s") valid, \(file.errors.count) error\(file.errors.count == 1 ? "" : "s"), \(file.warnings.count) warning\(file.warnings.count == 1 ? "" : "s")"
        console.print(summary)
        return file.errors.isEmpty ? 0 : 1
    }
}
