import Foundation

/// The `perimeter` command: dispatches to its subcommands.
///
/// Exit statuses: 0 success, 1 the input has errors (`validate`), 64 bad usage, 65 bad data,
/// 66 missing input file, 73 cannot write an output file.
public enum Perimeter {
    /// The version printed by `perimeter --version`.
    public static let version = "0.1.0"

    static let usage = """
    perimeter — a geofencing engine: entry, dwell and exit events for devices moving through areas.

    Usage: perimeter <command> [options]

    Commands:
      replay     Replay recorded tracks against fences and print the events
      validate   Check a fence file and report every problem
      demo       Run the built-in demo: a drive through named areas, events printed and drawn
                 (--serve: live, on a server's map page)
      study      Run a detection-quality study (noise, sparse) and print a Markdown table
      serve      Serve the REST API, live event stream and metrics over HTTP
      worker     Run one worker of a cluster on NATS JetStream (docs/cluster.md)

    Run 'perimeter <command> --help' for a command's options.
    """

    /// Runs the command line `arguments` (without the program name) and returns the exit status.
    public static func main(_ arguments: [String], console: Console = .standard) -> Int32 {
        guard let name = arguments.first else {
            console.error(usage + "\n")
            return 64
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch name {
            case "replay": return try ReplayCommand.run(rest, console: console)
            case "validate": return try ValidateCommand.run(rest, console: console)
            case "demo": return try DemoCommand.run(rest, console: console)
            case "study": return try StudyCommand.run(rest, console: console)
            case "serve": return try ServeCommand.run(rest, console: console)
            case "worker": return try WorkerCommand.run(rest, console: console)
            case "help", "--help", "-h":
                console.print(usage)
                return 0
            case "--version", "version":
                console.print("perimeter \(version)")
                return 0
            default:
                throw CommandLineError.usage("unknown command '\(name)' (commands: replay, validate, demo, study, serve, worker; see 'perimeter --help')")
            }
        } catch {
            return exitStatus(reporting: error, on: console)
        }
    }

    /// Reports a command's error on `console` and returns its exit status: the status a
    /// ``CommandLineError`` carries, 70 (internal error) for anything else.
    static func exitStatus(reporting error: any Error, on console: Console) -> Int32 {
        if let failure = error as? CommandLineError {
            console.complain(failure.description)
            return failure.exitStatus
        }
        console.complain("\(error)")
        return 70
    }
}
