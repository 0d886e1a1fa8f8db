import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterServer
import PerimeterService

/// `perimeter demo --serve`: the demo, live. A ``PerimeterServer`` on 127.0.0.1 gets the demo's fences,
/// the van drives the demo route through the server's simulation runner (`/v1/simulations`, so the map
/// page lists it), each event is printed as the service reports it, the van parks at the depot (the
/// van's own clock is advanced in simulated seconds until the parked time is over; no other device's
/// time moves), a summary compares the events with the offline demo's, and the server keeps serving
/// until SIGINT or SIGTERM — or stops at once with `--exit-after-drive`.
///
/// The events equal the offline demo's in kind, fence, order and time offset from the start: both
/// simulate the same route with ``TrackSimulation`` at the same speed and one update per simulated
/// second, and the depot's dwell falls due in the parked time either way. Only the start differs: the
/// simulation runner starts its drive at the current time, the offline demo at 2026-06-01T08:00:00Z.
struct DemoServer {
    /// Points where a test can act while the demo runs (the executable sets none).
    struct Hooks: Sendable {
        /// Called once the server listens and the URL was printed, just before the drive starts, on the
        /// demo's thread (the drive waits for it to return). The argument is the port.
        var driveWillStart: (@Sendable (UInt16) -> Void)?

        /// No hooks.
        init(driveWillStart: (@Sendable (UInt16) -> Void)? = nil) {
            self.driveWillStart = driveWillStart
        }
    }

    /// A failure while the demo runs (the server, the drive); exit status 70.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        var description: String
    }

    /// TCP port on 127.0.0.1; 0 picks a free one.
    var port: UInt16
    /// The SQLite file to use and keep; `nil` for a temporary one deleted at exit.
    var databasePath: String?
    /// Simulated seconds per real second; `nil` for about a minute in all.
    var timeScale: Double?
    /// Whether to stop once the summary is printed.
    var exitAfterDrive: Bool
    /// Driving speed in metres per second.
    var speed: Double
    /// How events are printed (with `ndjson`, everything else goes to standard error).
    var format: EventFormatter.Format

    /// Real seconds the default time scale aims at for the drive and the parking together.
    static let targetDuration = 60.0

    /// The time scale that makes the drive and the parking of `scenario` last about ``targetDuration``.
    static func defaultTimeScale(for scenario: DemoScenario) -> Double {
        let simulated = scenario.driveDuration + DemoData.parked
        return min(SimulationRequest.maximumTimeScale, max(1, (simulated / targetDuration).rounded()))
    }

    /// Runs the demo; returns the exit status.
    func run(console: Console, hooks: Hooks = Hooks()) throws -> Int32 {
        let scenario = try DemoScenario(speed: speed)
        let timeScale = self.timeScale ?? Self.defaultTimeScale(for: scenario)
        let info: (String) -> Void = format == .text ? { console.print($0) } : { console.error($0 + "\n") }
        let device = DeviceID(DemoData.device)

        let temporaryFolder: URL?
        let path: String
        if let databasePath {
            temporaryFolder = nil
            path = databasePath
        } else {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("perimeter-demo-\(UUID().uuidString)")
            do {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            } catch {
                throw CommandLineError.cannotCreate("demo: cannot create a temporary folder for the database: \(error.localizedDescription)")
            }
            temporaryFolder = folder
            path = folder.appendingPathComponent("demo.sqlite").path
        }
        defer { if let temporaryFolder { try? FileManager.default.removeItem(at: temporaryFolder) } }

        let signals = StopSignals()
        defer { signals.restore() }
        let server: PerimeterServer
        do throws(ServerError) {
            server = try PerimeterServer(configuration: ServerConfiguration(databasePath: path, address: "127.0.0.1", port: port))
        } catch {
            let busy = port != 0 && error.message.hasPrefix("cannot listen")
            throw CommandLineError.usage("demo: \(error.message)\(busy ? " (another server may use port \(port): try --port 0)" : "")")
        }
        defer { server.stop() }

        // A database that already saw the van would start it inside the depot: different events.
        let known: Date?
        do throws(GeofencingError) {
            known = try server.service.deviceStatus(of: device).lastUpdateTime
        } catch {
            throw Failure(description: "demo: cannot read \(path): \(error.message)")
        }
        if let known {
            throw CommandLineError.usage(
                "demo: \(path) already holds updates of \(device) (up to \(RFC3339.string(from: known))) from an earlier demo; give a new --db file or delete this one")
        }
        do throws(Problem) {
            _ = try server.api.importFeatures(Array(DemoData.fences.utf8))
        } catch {
            throw Failure(description: "demo: the server refused the demo fences: \(error.detail)")
        }
        let printer = DemoEventPrinter(device: device, format: format, console: console)
        server.service.addObserver(printer)
        defer { server.service.removeObserver(printer) }

        let url = "http://127.0.0.1:\(server.port)/"
        let realSeconds = (scenario.driveDuration + DemoData.parked) / timeScale
        info("Perimeter demo, live: \(scenario.description); at \(Self.number(timeScale))× real time that takes about \(Self.number(realSeconds.rounded(.up))) s.")
        info("Map: \(url)   (database \(path)\(temporaryFolder != nil ? ", deleted at exit" : ""))")
        info("")
        hooks.driveWillStart?(server.port)

        let drive = try startDrive(server, timeScale: timeScale)
        let interrupted: Bool
        switch try waitForDrive(drive, server: server, signals: signals, realSeconds: scenario.driveDuration / timeScale) {
        case .finished: interrupted = try park(server, device: device, timeScale: timeScale, signals: signals)
        case .interrupted: interrupted = true
        }
        if interrupted {
            info("")
            info("Interrupted: stopping the server.")
            return 0
        }

        let events = printer.events
        info("")
        info(DemoCommand.counts(events))
        if let shift = timeShift(server, device: device, scenario: scenario) {
            let start = scenario.updates[0].time.addingTimeInterval(shift)
            if let difference = Self.difference(events, scenario.events, shift: shift) {
                console.complain("demo: these events differ from the offline demo's (\(difference)); did another client send updates for \(device)?")
            } else {
                info("The same events as the offline demo ('perimeter demo'); only the times differ: this drive started at \(RFC3339.string(from: start)), the offline one at \(DemoData.start).")
            }
        }
        if exitAfterDrive {
            info("Stopping the server (--exit-after-drive).")
            return 0
        }
        info("Serving the map at \(url); Ctrl-C to stop.")
        signals.wait()
        info("Stopping the server.")
        return 0
    }

    /// Starts the van's drive through the server's simulation runner; returns the simulation's id.
    /// - Throws: ``Failure`` when the runner refuses it.
    func startDrive(_ server: PerimeterServer, timeScale: Double) throws -> String {
        let body: JSONValue = .object([
            "deviceId": .string(DemoData.device),
            "path": (try? JSONParser().parse(Array(DemoData.route.utf8))) ?? .null,
            "speed": .double(speed),
            "interval": .double(1),
            "timeScale": .double(timeScale),
        ])
        var bytes: [UInt8] = []
        JSONWriter().write(body, into: &bytes)
        let started: JSONValue
        do throws(Problem) {
            started = try server.api.simulations.start(bytes)
        } catch {
            throw Failure(description: "demo: the drive could not start: \(error.detail)")
        }
        guard let id = started["id"]?.stringValue else {
            throw Failure(description: "demo: the simulation runner answered without an id: \(JSONWriter().string(started))")
        }
        return id
    }

    /// How waiting for the drive ended.
    enum DriveEnd { case finished, interrupted }

    /// Waits until the simulation `id` has sent every update, a signal arrives (the drive is then
    /// stopped), or a generous deadline passes (twice the expected time plus two minutes: a drive that
    /// makes no progress must not hang a non-interactive run).
    /// - Throws: ``Failure`` when the drive failed, was stopped by someone else, or is overdue.
    func waitForDrive(_ id: String, server: PerimeterServer, signals: StopSignals, realSeconds: Double) throws -> DriveEnd {
        let deadline = Date().addingTimeInterval(realSeconds * 2 + 120)
        while true {
            if signals.wait(until: .now() + 0.05) {
                _ = try? server.api.simulations.stop(id: id)
                return .interrupted
            }
            let simulation: JSONValue
            do throws(Problem) {
                simulation = try server.api.simulations.simulation(id: id)
            } catch {
                throw Failure(description: "demo: the drive \(id) disappeared: \(error.detail)")
            }
            switch simulation["status"]?.stringValue {
            case "running"?:
                if Date() > deadline {
                    _ = try? server.api.simulations.stop(id: id)
                    throw Failure(description: "demo: the drive has not ended after \(Int(realSeconds * 2 + 120)) s (expected \(Self.number(realSeconds)) s); stopped")
                }
            case "finished"?:
                return .finished
            case let status:
                let reason = simulation["error"]?.stringValue.map { ": \($0)" } ?? ""
                throw Failure(description: "demo: the drive ended as \(status ?? "unknown")\(reason)")
            }
        }
    }

    /// The van parks: advances the van's own clock (no other device's) one simulated second at a time,
    /// paced by the time scale, for ``DemoData/parked`` seconds after its last update (the depot's dwell falls due).
    /// - Returns: whether a signal interrupted it.
    func park(_ server: PerimeterServer, device: DeviceID, timeScale: Double, signals: StopSignals) throws -> Bool {
        let known: Date?
        do throws(GeofencingError) {
            known = try server.service.deviceStatus(of: device).lastUpdateTime
        } catch {
            throw Failure(description: "demo: cannot read the state of \(device): \(error.message)")
        }
        guard let last = known else {
            throw Failure(description: "demo: the drive ended but the server has no update of \(device)")
        }
        let origin = DispatchTime.now()
        for second in 1...Int(DemoData.parked) {
            if signals.wait(until: origin + Double(second) / timeScale) { return true }
            do throws(GeofencingError) {
                try server.service.advance(device, to: last.addingTimeInterval(Double(second)))
            } catch {
                throw Failure(description: "demo: advancing the van's clock failed: \(error.message)")
            }
        }
        return false
    }

    /// How much later the live drive happened than the offline one: the server's last update of the van
    /// minus the offline last update (the drives have the same length, so this is the start's shift).
    func timeShift(_ server: PerimeterServer, device: DeviceID, scenario: DemoScenario) -> TimeInterval? {
        guard let offlineLast = scenario.updates.last?.time,
              let last = try? server.service.deviceStatus(of: device).lastUpdateTime else { return nil }
        return last.timeIntervalSince(offlineLast)
    }

    /// The first difference between the live `events` and the offline `expected` ones (kind, fence,
    /// device, order, and time once shifted by `shift`, within a millisecond), or `nil` when they agree.
    static func difference(_ events: [GeofenceEvent], _ expected: [GeofenceEvent], shift: TimeInterval) -> String? {
        for (index, (live, offline)) in zip(events, expected).enumerated() {
            let offset = live.time.timeIntervalSince(offline.time) - shift
            if live.kind != offline.kind || live.fence != offline.fence || live.device != offline.device || abs(offset) > 0.001 {
                return "event \(index + 1): \(live.kind) \(live.fence) at +\(live.time.timeIntervalSince(offline.time)) s, offline \(offline.kind) \(offline.fence)"
            }
        }
        return events.count == expected.count ? nil : "\(events.count) events, offline \(expected.count)"
    }

    /// `25`, `0.5`, `59`: a number without a needless fraction.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e12 ? String(Int64(value)) : String(format: "%.1f", value)
    }
}
