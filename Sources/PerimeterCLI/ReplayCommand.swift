import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterSVG
import PerimeterService
import PerimeterTracks

/// `perimeter replay`: recorded tracks against fences, events printed in time order.
struct ReplayCommand {
    static let help = """
    Usage: perimeter replay --fences FILE --track FILE [--track FILE ...] [options]

    Replays recorded location updates against a set of fences and prints the entry, dwell and exit
    events in time order. Tracks of several devices are merged by time.

    Options:
      --fences FILE        GeoJSON fences (FeatureCollection, Feature or geometry). Required.
      --track FILE         A track: .gpx, .nmea, .csv, .ndjson or .geojson (format from the extension,
                           else sniffed). Repeat for several tracks. Required.
      --device ID          Device id for tracks that name none (default: the file name without extension).
      --dwell SECONDS      Dwell time for fences that set none (default: no dwell).
      --radius METRES      Radius for Point, MultiPoint and line fences that set none (default 300, as
                           the service's defaultRadius; each fence that gets it is named in a warning).
      --speed M/S          Simulate tracks that carry no times (GeoJSON lines, GPX without <time>) at
                           this speed, one update per second, starting at 1970-01-01T00:00:00Z.
      --format FORMAT      text (default): "Entered Firehole River at 17:22:23", then " — " and the
                           fence's perimeter:message when it has one;
                           ndjson: one JSON event per line, as the server writes events (sequence, id,
                           visitId, type, fenceId, deviceId, time, ..., properties, message); sequence
                           is the event's position in the output, from 1.
      --svg FILE           Also draw the fences (coloured by their last event), tracks and events as SVG.
      --threads N          Engine shards, each on a thread of its own (default 1; 0: one per core). The
                           events are the same for every N, in the same order: by time, then device id.
      --strict             Treat every warning in the fence file as an error.
      -h, --help           Show this help.

    Detection options (off by default; a fence's own perimeter: keys win):
    """ + DetectionFlags.help

    var fencesPath: String
    var trackPaths: [String]
    var device: DeviceID?
    var dwell: Double?
    var radius: Double?
    var speed: Double?
    var format: EventFormatter.Format = .text
    var svgPath: String?
    var strict = false
    /// Engine shards (`--threads`); 0 was resolved to the core count.
    var threads = 1
    var detection = DetectionFlags()

    /// Parses the command's arguments; `nil` when help was requested.
    init?(_ arguments: [String]) throws {
        var args = Arguments(arguments, command: "replay")
        if args.wantsHelp() { return nil }
        let fences = try args.option("fences")
        trackPaths = try args.options("track")
        device = try args.option("device").map { DeviceID($0) }
        dwell = try args.number("dwell", in: 0...31_536_000)
        radius = try args.number("radius", in: 0.001...20_037_508) ?? FenceLoader.Options.mapboxDefaultRadius
        speed = try args.number("speed", in: 0.001...100_000)
        format = try args.choice("format", EventFormatter.Format.allCases.map(\.rawValue)).flatMap(EventFormatter.Format.init) ?? .text
        svgPath = try args.option("svg")
        strict = args.flag("strict")
        threads = Int(try args.number("threads", in: 0...1024) ?? 1)
        if threads == 0 { threads = ProcessInfo.processInfo.activeProcessorCount }
        detection = try DetectionFlags(&args)
        try args.finish()
        guard let fences else { throw CommandLineError.usage("replay: --fences FILE is required (see 'perimeter replay --help')") }
        fencesPath = fences
        try validate()
    }

    func validate() throws {
        if trackPaths.isEmpty {
            throw CommandLineError.usage("replay: at least one --track FILE is required (see 'perimeter replay --help')")
        }
        if let device, device.rawValue.isEmpty { throw CommandLineError.usage("replay: --device must not be empty") }
    }

    static func run(_ arguments: [String], console: Console) throws -> Int32 {
        guard let command = try ReplayCommand(arguments) else {
            console.print(help)
            return 0
        }
        return try command.run(console: console)
    }

    func run(console: Console) throws -> Int32 {
        let fenceFile = try InputFiles.fences(fencesPath, options: FenceLoader.Options(defaultRadius: radius, strict: strict))
        if let first = fenceFile.errors.first {
            let more = fenceFile.errors.count > 1 ? " (and \(fenceFile.errors.count - 1) more; run 'perimeter validate \(fencesPath)')" : ""
            throw CommandLineError.data(first + more)
        }
        if !fenceFile.warnings.isEmpty {
            console.complain("\(fencesPath): \(fenceFile.warnings.count) warning\(fenceFile.warnings.count == 1 ? "" : "s") (run 'perimeter validate \(fencesPath)' to see them)")
        }
        let simulation = try speed.map { speed -> TrackSimulation in
            guard let simulation = TrackSimulation(speed: speed) else {
                throw CommandLineError.usage("replay: --speed \(speed) is not a usable speed")
            }
            return simulation
        }
        let (updates, warnings) = try InputFiles.tracks(trackPaths, reader: TrackReader(device: device, simulation: simulation))
        for warning in warnings.prefix(5) { console.complain(warning) }
        if warnings.count > 5 { console.complain("… and \(warnings.count - 5) more track warnings") }

        let result = Self.replay(fences: fenceFile.fences, updates: updates,
                                 configuration: detection.configuration(defaultDwellTime: dwell), threads: threads,
                                 console: console)
        let devices = Set(updates.map(\.device))
        let formatter = EventFormatter(format: format, manyDevices: devices.count > 1)
        var text = ""
        for logged in EventFormatter.logged(result.events, fences: FenceSet(fenceFile.fences)) {
            text += formatter.line(for: logged)
            text += "\n"
            if text.utf8.count > 1 << 16 {
                console.output(text)
                text = ""
            }
        }
        console.output(text)
        if !result.rejections.isEmpty {
            console.complain("\(result.rejections.count) update\(result.rejections.count == 1 ? " was" : "s were") rejected; first: \(result.rejections[0])")
        }
        if let svgPath {
            try Self.writeSVG(to: svgPath, fences: fenceFile.fences, updates: updates, events: result.events,
                              title: "perimeter replay: \(result.events.count) events")
        }
        return 0
    }

    /// Runs the engine over `updates` (merged by time), drawing a progress bar for long inputs.
    static func replay(fences: [Fence], updates: [LocationUpdate], dwell: Double?, console: Console) -> DetectionEngine.ReplayResult {
        replay(fences: fences, updates: updates, configuration: .init(defaultDwellTime: dwell), console: console)
    }

    /// Runs an engine with `configuration` over `updates`, its devices split among `threads` shards
    /// (the events do not depend on the count; docs/semantics.md, "Shards").
    static func replay(fences: [Fence], updates: [LocationUpdate], configuration: DetectionEngine.Configuration,
                       threads: Int = 1, console: Console) -> DetectionEngine.ReplayResult {
        var engine = ShardedEngine(fences: fences, configuration: configuration, shards: threads)
        var bar = ProgressBar(console: console, total: updates.count, label: "replaying")
        return engine.replay(updates) { bar.update($0) }
    }

    /// Draws fences, the devices' tracks and the events into an SVG file.
    static func writeSVG(to path: String, fences: [Fence], updates: [LocationUpdate], events: [GeofenceEvent], title: String) throws {
        var paths: [DeviceID: [LocationUpdate]] = [:]
        for update in updates { paths[update.device, default: []].append(update) }
        let tracks = paths.keys.sorted().map { device in
            (device: device, path: paths[device]!.sorted { $0.time < $1.time }.map(\.coordinate))
        }
        let svg = SVGMap(title: title).render(fences: fences, tracks: tracks, events: events)
        do {
            try Data(svg.utf8).write(to: URL(fileURLWithPath: path))
        } catch {
            throw CommandLineError.cannotCreate("cannot write SVG file '\(path)': \(error.localizedDescription)")
        }
    }
}
