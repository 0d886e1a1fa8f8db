import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterServer
import PerimeterService

/// `perimeter demo`: a delivery van drives through seven named areas; events are printed and drawn
/// (offline, the default) or shown live on the map page of a running server (`--serve`, ``DemoServer``).
struct DemoCommand {
    static let help = """
    Usage: perimeter demo [--svg FILE] [--format text|ndjson] [--speed M/S] [--export DIR]
           perimeter demo --serve [--port PORT] [--db FILE] [--time-scale X] [--exit-after-drive]
                          [--format text|ndjson] [--speed M/S]

    Runs the built-in demo: a delivery van drives about 10.5 km through seven areas of an imaginary
    town (a polygon with a hole, a circle, a corridor along a river, a buffered polygon, a multipolygon),
    one location update per second, then parks at the depot for ten minutes. Entry, dwell and exit events
    are printed in time order.

    Without --serve the drive is replayed at once, starting at 2026-06-01T08:00:00Z.

    With --serve it happens live: a server starts on 127.0.0.1 with the demo's fences, prints the URL of
    its map page, drives the van along the route through the server's simulation API (starting now,
    sped up by the time scale), prints each event as the server reports it, then a summary, and keeps
    serving until Ctrl-C or SIGTERM so the map can be looked at. The events are the offline demo's, only
    their times differ (the drive starts now, not at 2026-06-01T08:00:00Z).

    Options:
      --svg FILE          Draw the areas (coloured by their last event), the route and the events.
      --format FORMAT     text (default) or ndjson, as for 'perimeter replay'. With --serve and ndjson,
                          only events go to standard output; the URL and summary go to standard error.
      --speed M/S         Driving speed (default 12 m/s, 43 km/h).
      --export DIR        Write the demo's fences and route as GeoJSON files into DIR and stop.
      --serve             Run the demo live on a server (below).
      --port PORT         With --serve: TCP port on 127.0.0.1 (default 8080; 0 picks a free one).
      --db FILE           With --serve: SQLite database to use and keep (a new file: it must not hold the
                          demo van already). Default: a temporary database, deleted at exit.
      --time-scale X      With --serve: simulated seconds per real second, up to 10000 (default: drive
                          and parking take about a minute, 25 at the default speed).
      --exit-after-drive  With --serve: stop the server after the summary instead of serving on.
      -h, --help          Show this help.
    """

    var svgPath: String?
    var format: EventFormatter.Format = .text
    var speed = DemoData.speed
    var exportDirectory: String?
    /// The live mode's settings; `nil` without `--serve`.
    var server: DemoServer?

    init?(_ arguments: [String]) throws {
        var args = Arguments(arguments, command: "demo")
        if args.wantsHelp() { return nil }
        svgPath = try args.option("svg")
        format = try args.choice("format", EventFormatter.Format.allCases.map(\.rawValue)).flatMap(EventFormatter.Format.init) ?? .text
        speed = try args.number("speed", in: 0.1...1000) ?? DemoData.speed
        exportDirectory = try args.option("export")
        let serve = args.flag("serve")
        let port = try args.number("port", in: 0...65_535)
        if let port, port != port.rounded() {
            throw CommandLineError.usage("demo: --port must be a whole number from 0 to 65535, not \(port)")
        }
        let database = try args.option("db")
        let timeScale = try args.number("time-scale", in: 0.1...SimulationRequest.maximumTimeScale)
        let exitAfterDrive = args.flag("exit-after-drive")
        try args.finish()
        if serve {
            if svgPath != nil || exportDirectory != nil {
                throw CommandLineError.usage("demo: --\(svgPath != nil ? "svg" : "export") works only without --serve (the live demo shows its map at the printed URL)")
            }
            server = DemoServer(port: UInt16(port ?? 8080), databasePath: database, timeScale: timeScale,
                                exitAfterDrive: exitAfterDrive, speed: speed, format: format)
        } else {
            let serverOnly = [("port", port != nil), ("db", database != nil), ("time-scale", timeScale != nil),
                              ("exit-after-drive", exitAfterDrive)]
            if let (name, _) = serverOnly.first(where: \.1) {
                throw CommandLineError.usage("demo: --\(name) needs --serve (it configures the live demo's server)")
            }
        }
    }

    static func run(_ arguments: [String], console: Console, hooks: DemoServer.Hooks = DemoServer.Hooks()) throws -> Int32 {
        guard let command = try DemoCommand(arguments) else {
            console.print(help)
            return 0
        }
        if let server = command.server { return try server.run(console: console, hooks: hooks) }
        return try command.run(console: console)
    }

    func run(console: Console) throws -> Int32 {
        if let exportDirectory { return try export(to: exportDirectory, console: console) }

        let scenario = try DemoScenario(speed: speed)
        let events = scenario.events
        let formatter = EventFormatter(format: format, manyDevices: false)
        if format == .text {
            console.print("Perimeter demo: \(scenario.description).")
            console.print("")
        }
        for logged in EventFormatter.logged(events, fences: FenceSet(scenario.fences)) { console.print(formatter.line(for: logged)) }
        if let svgPath {
            try ReplayCommand.writeSVG(to: svgPath, fences: scenario.fences, updates: scenario.updates, events: events,
                                       title: "Perimeter demo — \(DemoData.device), \(events.count) events")
        }
        if format == .text {
            console.print("")
            console.print(Self.counts(events))
            if let svgPath { console.print("Map written to \(svgPath)") }
        }
        return 0
    }

    /// `22 events: 8 entries, 6 dwells, 8 exits.`
    static func counts(_ events: [GeofenceEvent]) -> String {
        let counts = Dictionary(grouping: events, by: \.kind).mapValues(\.count)
        return "\(events.count) events: \(counts[.entry] ?? 0) entries, \(counts[.dwell] ?? 0) dwells, \(counts[.exit] ?? 0) exits."
    }

    private func export(to directory: String, console: Console) throws -> Int32 {
        let folder = URL(fileURLWithPath: directory, isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data((DemoData.fences + "\n").utf8).write(to: folder.appendingPathComponent("demo-fences.geojson"))
            try Data((DemoData.route + "\n").utf8).write(to: folder.appendingPathComponent("demo-route.geojson"))
        } catch {
            throw CommandLineError.cannotCreate("cannot write the demo files into '\(directory)': \(error.localizedDescription)")
        }
        console.print("Wrote \(directory)/demo-fences.geojson and \(directory)/demo-route.geojson.")
        console.print("Replay them: perimeter replay --fences \(directory)/demo-fences.geojson --track \(directory)/demo-route.geojson --speed \(speed)")
        return 0
    }
}
