import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterTracks

/// `perimeter demo`: a delivery van drives through seven named areas; events are printed and drawn.
struct DemoCommand {
    static let help = """
    Usage: perimeter demo [--svg FILE] [--format text|ndjson] [--speed M/S] [--export DIR]

    Runs the built-in demo: a delivery van drives about 10.5 km through seven areas of an imaginary
    town (a polygon with a hole, a circle, a corridor along a river, a buffered polygon, a multipolygon),
    one location update per second, then parks at the depot for ten minutes. Entry, dwell and exit events
    are printed in time order.

    Options:
      --svg FILE        Draw the areas (coloured by their last event), the route and the events.
      --format FORMAT   text (default) or ndjson, as for 'perimeter replay'.
      --speed M/S       Driving speed (default 12 m/s, 43 km/h).
      --export DIR      Write the demo's fences and route as GeoJSON files into DIR and stop.
      -h, --help        Show this help.
    """

    var svgPath: String?
    var format: EventFormatter.Format = .text
    var speed = DemoData.speed
    var exportDirectory: String?

    init?(_ arguments: [String]) throws {
        var args = Arguments(arguments, command: "demo")
        if args.wantsHelp() { return nil }
        svgPath = try args.option("svg")
        format = try args.choice("format", EventFormatter.Format.allCases.map(\.rawValue)).flatMap(EventFormatter.Format.init) ?? .text
        speed = try args.number("speed", in: 0.1...1000) ?? DemoData.speed
        exportDirectory = try args.option("export")
        try args.finish()
    }

    static func run(_ arguments: [String], console: Console) throws -> Int32 {
        guard let command = try DemoCommand(arguments) else {
            console.print(help)
            return 0
        }
        return try command.run(console: console)
    }

    func run(console: Console) throws -> Int32 {
        if let exportDirectory { return try export(to: exportDirectory, console: console) }

        let read = GeoJSONReader().read(Array(DemoData.fences.utf8))
        guard let object = read.object, !read.hasErrors else {
            throw CommandLineError.data("the built-in demo fences do not load: \(read.problems.first.map { "\($0)" } ?? "no object")")
        }
        let loaded = FenceLoader().load(object)
        guard !loaded.hasErrors else {
            throw CommandLineError.data("the built-in demo fences do not load: \(loaded.problems[0])")
        }
        guard let start = RFC3339.date(from: DemoData.start), let simulation = TrackSimulation(speed: speed, start: start) else {
            throw CommandLineError.usage("demo: cannot simulate a drive at \(speed) m/s")
        }
        let updates = try TrackReader(format: .geojson, device: DeviceID(DemoData.device), simulation: simulation)
            .read(Array(DemoData.route.utf8), source: "demo-route.geojson").updates
        guard let last = updates.last else { throw CommandLineError.data("the built-in demo route is empty") }

        var engine = DetectionEngine(fences: loaded.fences)
        var events = engine.replay(updates).events
        // The van parks at the depot: time passes without updates, and the depot's dwell falls due.
        engine.advance(to: last.time.addingTimeInterval(DemoData.parked), into: &events)

        let fences = FenceSet(loaded.fences)
        let formatter = EventFormatter(format: format, fences: fences, manyDevices: false)
        if format == .text {
            console.print("Perimeter demo: \(DemoData.device) drives \(updates.count) s through \(loaded.fences.count) areas at \(Self.kmh(speed)) km/h, then parks for \(Int(DemoData.parked / 60)) min.")
            console.print("")
        }
        for event in events { console.print(formatter.line(for: event)) }
        if let svgPath {
            try ReplayCommand.writeSVG(to: svgPath, fences: loaded.fences, updates: updates, events: events,
                                       title: "Perimeter demo — \(DemoData.device), \(events.count) events")
        }
        if format == .text {
            let counts = Dictionary(grouping: events, by: \.kind).mapValues(\.count)
            console.print("")
            console.print("\(events.count) events: \(counts[.entry] ?? 0) entries, \(counts[.dwell] ?? 0) dwells, \(counts[.exit] ?? 0) exits.")
            if let svgPath { console.print("Map written to \(svgPath)") }
        }
        return 0
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

    private static func kmh(_ metresPerSecond: Double) -> String {
        String(format: "%.0f", metresPerSecond * 3.6)
    }
}
