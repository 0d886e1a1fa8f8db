// perimeter-service-crash: a tiny driver for the crash test of the SQLite-backed GeofencingService.
//
//   perimeter-service-crash DB FENCES.geojson UPDATES.csv [--batch N] [--dwell SECONDS] [--group N] [--options]
//                           [--progress] [--exclusive]
//
// Opens (or creates) the store DB, adds the fences of FENCES.geojson when the store has none, then
// streams UPDATES.csv (lines `device,seconds-since-1970,latitude,longitude`) into the service in
// batches of N, resuming after the updates the store says were already processed. At the end it
// prints the whole event log, one `sequence<TAB>event id<TAB>kind<TAB>device<TAB>fence` line each,
// after a `log` line. Before streaming it prints `resuming at N` (N updates were already processed). `--group N` selects group commit every N updates instead of every call.
// `--options` turns detection options on: debounce, repeated dwell, staleness, crossings, a reorder
// window and duplicate suppression (so their state goes through the store too).
// `--progress` prints `at N` after each batch (N updates handed to the service so far), so a test can
// kill the process at a chosen point of the stream instead of after a guessed time.
// `--exclusive` opens the store in exclusive locking mode (as `perimeter serve` does).
// Exit status: 0 on success, 1 with a message on stderr otherwise.
import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import PerimeterSQLite

struct Failure: Error, CustomStringConvertible {
    var description: String
}

func parseArguments() throws -> (db: String, fences: String, updates: String, batch: Int, dwell: Double?, group: Int?,
                                 options: Bool, progress: Bool, exclusive: Bool) {
    var positional: [String] = []
    var batch = 16, dwell: Double?, group: Int?, options = false, progress = false, exclusive = false
    var arguments = CommandLine.arguments.dropFirst()
    while let argument = arguments.popFirst() {
        switch argument {
        case "--options":
            options = true
        case "--progress":
            progress = true
        case "--exclusive":
            exclusive = true
        case "--batch", "--dwell", "--group":
            guard let value = arguments.popFirst(), let number = Double(value), number > 0 else {
                throw Failure(description: "\(argument) needs a positive number")
            }
            if argument == "--batch" { batch = Int(number) } else if argument == "--dwell" { dwell = number } else { group = Int(number) }
        default:
            positional.append(argument)
        }
    }
    guard positional.count == 3 else {
        throw Failure(description: "usage: perimeter-service-crash DB FENCES.geojson UPDATES.csv [--batch N] [--dwell SECONDS] [--group N] [--options] [--progress] [--exclusive]")
    }
    return (positional[0], positional[1], positional[2], batch, dwell, group, options, progress, exclusive)
}

func readUpdates(_ path: String) throws -> [LocationUpdate] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    var updates: [LocationUpdate] = []
    for (number, line) in text.split(separator: "\n").enumerated() {
        let fields = line.split(separator: ",")
        guard fields.count == 4, let time = Double(fields[1]), let latitude = Double(fields[2]),
              let longitude = Double(fields[3]) else {
            throw Failure(description: "\(path):\(number + 1): expected device,time,latitude,longitude")
        }
        updates.append(LocationUpdate(device: DeviceID(String(fields[0])), time: Date(timeIntervalSince1970: time),
                                      latitude: latitude, longitude: longitude))
    }
    return updates
}

func run() throws {
    let arguments = try parseArguments()
    let store = try SQLiteGeofencingStore(path: arguments.db, lockingMode: arguments.exclusive ? .exclusive : .shared)
    let service = GeofencingService(store: store)
    // The data clock: the run is compared with an uninterrupted one, so no wall clock may fire timers.
    var options = GeofencingOptions(defaultDwellTime: arguments.dwell, timeModel: .data,
                                    durability: arguments.group.map { .everyUpdates($0) } ?? .everyCall)
    if arguments.options {
        options.detectionOptions = DetectionOptions(entryDelay: 4, exitDelay: 3, crossings: true, dwellEvery: 25,
                                                    staleAfter: 45, exitOnStale: true)
        options.reorderWindow = 8
        options.deduplicate = true
    }
    try service.configure(options)
    if try service.features().isEmpty {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments.fences)))
        let result = GeoJSONReader().read(bytes)
        guard let object = result.object, !result.hasErrors else {
            throw Failure(description: "\(arguments.fences): \(result.errors.first?.description ?? "no GeoJSON")")
        }
        try service.addFeatures(object.features)
    }
    let updates = try readUpdates(arguments.updates)
    var next = Int(service.processedUpdateCount)
    FileHandle.standardOutput.write(Data("resuming at \(next)\n".utf8))
    while next < updates.count {
        let end = min(updates.count, next + arguments.batch)
        try service.process(updates[next..<end])
        next = end
        if arguments.progress { FileHandle.standardOutput.write(Data("at \(next)\n".utf8)) }
    }
    try service.flush()
    var output = "log\n"
    var after: Int64 = 0
    while true {
        let page = try service.loggedEvents(after: after, limit: 10_000)
        guard let last = page.last else { break }
        for logged in page {
            let e = logged.event
            output += "\(logged.sequence)\t\(e.id)\t\(e.kind.rawValue)\t\(e.device)\t\(e.fence)\n"
        }
        after = last.sequence
    }
    FileHandle.standardOutput.write(Data(output.utf8))
    store.close()
}

do {
    try run()
} catch {
    FileHandle.standardError.write(Data("perimeter-service-crash: \(error)\n".utf8))
    exit(1)
}
