import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import PerimeterTracks
import Synchronization

/// Simulated drives run by the server (`/v1/simulations`): a device moves along a path at a constant
/// speed and its updates are fed to the ``GeofencingService`` from a background task, paced in real time
/// (divided by the time scale), so the map page and every stream client see the drive happen live.
///
/// The timing comes from ``TrackSimulation``: an update every `interval` simulated seconds, the first at
/// the moment the simulation starts. Rejected updates (for example out of order because another client
/// also reports for the device) are counted and the drive goes on; missing consent or a service that
/// is not configured ends it with status `failed`.
///
/// ```swift
/// let runner = SimulationRunner(service: service)
/// let started = try runner.start(body)      // {"id": "sim-1", "status": "running", …}
/// runner.list()                             // {"simulations": [ … ]}
/// try runner.stop(id: "sim-1")
/// ```
public final class SimulationRunner: Sendable {
    /// What a simulation is doing.
    public enum Status: String, Sendable {
        /// Still sending updates.
        case running
        /// Sent every update.
        case finished
        /// Stopped by ``SimulationRunner/stop(id:)`` or ``SimulationRunner/stopAll()``.
        case stopped
        /// Ended by an error (see `error`).
        case failed
    }

    struct Entry {
        var id: String
        var request: SimulationRequest
        var status: Status
        var total: Int
        var sent = 0
        var rejected = 0
        var events = 0
        var startedAt: Date
        var endedAt: Date?
        var position: LocationUpdate?
        var lastError: String?
        var task: Task<Void, Never>?
    }

    struct State {
        var entries: [String: Entry] = [:]
        var order: [String] = []
        var nextNumber = 0
        var closed = false
    }

    /// The service the updates go to.
    public let service: GeofencingService
    /// The drives' own thread: a drive keeps its pace even while other work holds Swift's shared
    /// threads (a drive's task keeps the runner alive, so the thread ends only after the last drive).
    let executor = ThreadExecutor(name: "perimeter-simulations")
    /// Most simulations running at once (further starts are refused with 409).
    public let maximumRunning: Int
    /// Most ended simulations kept for ``list()``; older ones are forgotten.
    public let keptEnded: Int
    /// Called with each update the service accepted (the API passes ``EventHub/publishLocations(_:)``,
    /// so stream clients see the simulated device move between events).
    public let onAccepted: (@Sendable (LocationUpdate) -> Void)?
    let state = Mutex(State())

    /// Creates a runner feeding `service`; `onAccepted` hears every accepted update.
    public init(service: GeofencingService, maximumRunning: Int = 64, keptEnded: Int = 32,
                onAccepted: (@Sendable (LocationUpdate) -> Void)? = nil) {
        self.service = service
        self.maximumRunning = max(1, maximumRunning)
        self.keptEnded = max(0, keptEnded)
        self.onAccepted = onAccepted
    }

    deinit { executor.shutdown() }

    /// `POST /v1/simulations`: validates `body` (see ``SimulationRequest``) and starts the drive.
    /// - Returns: the new simulation's JSON (answer it with status 201).
    /// - Throws: ``Problem`` 400/422 for a bad body, 409 when ``maximumRunning`` drives are running,
    ///   503 after ``stopAll()``.
    /// - Complexity: O(updates) to compute the timing before the task starts.
    public func start(_ body: [UInt8]) throws(Problem) -> JSONValue {
        try start(SimulationRequest.parse(body))
    }

    /// Starts a validated drive; see ``start(_:)-([UInt8])``.
    public func start(_ request: SimulationRequest) throws(Problem) -> JSONValue {
        guard let timing = TrackSimulation(speed: request.speed, interval: request.interval, start: Date()) else {
            throw Problem.invalidField(JSONPath([.key("speed")]), "speed and interval must be finite and > 0")
        }
        let seeds = request.path.map {
            LocationUpdate(device: request.device, time: timing.start, latitude: $0.latitude, longitude: $0.longitude)
        }
        let updates: [LocationUpdate]
        do {
            updates = try timing.simulate(seeds, source: "path")
        } catch {
            throw Problem(422, "invalid-path", title: "The path cannot be simulated", detail: "\(error)", pointer: "/path")
        }
        let id = try state.withLock { s throws(Problem) -> String in
            guard !s.closed else {
                throw Problem(503, "stopping", title: "Service unavailable", detail: "the server is stopping; no new simulations")
            }
            let running = s.entries.values.reduce(0) { $0 + ($1.status == .running ? 1 : 0) }
            guard running < maximumRunning else {
                throw Problem(409, "too-many-simulations", title: "Too many simulations",
                              detail: "\(running) simulations are running (the limit is \(maximumRunning)); stop one with DELETE /v1/simulations/{id}")
            }
            s.nextNumber += 1
            let id = "sim-\(s.nextNumber)"
            s.entries[id] = Entry(id: id, request: request, status: .running, total: updates.count, startedAt: Date())
            s.order.append(id)
            forgetOldEnded(&s)
            return id
        }
        let task = Task.detached(executorPreference: executor) { [self] in
            await self.drive(id: id, updates: updates, timeScale: request.timeScale)
        }
        return state.withLock { s in
            if s.entries[id]?.status == .running { s.entries[id]?.task = task }
            return s.entries[id].map(Self.json) ?? .null
        }
    }

    /// `GET /v1/simulations`: `{"simulations": [ … ]}`, oldest first (running and recently ended ones).
    public func list() -> JSONValue {
        state.withLock { s in
            .object(["simulations": .array(s.order.compactMap { s.entries[$0].map(Self.json) })])
        }
    }

    /// `GET /v1/simulations/{id}`.
    /// - Throws: ``Problem`` 404 for an unknown (or forgotten) id.
    public func simulation(id: String) throws(Problem) -> JSONValue {
        guard let entry = state.withLock({ $0.entries[id] }) else { throw Self.unknown(id) }
        return Self.json(entry)
    }

    /// `DELETE /v1/simulations/{id}`: stops a running drive (no further updates are sent); stopping an
    /// ended one changes nothing.
    /// - Returns: the simulation's JSON.
    /// - Throws: ``Problem`` 404 for an unknown id.
    public func stop(id: String) throws(Problem) -> JSONValue {
        let (entry, task) = try state.withLock { s throws(Problem) -> (Entry, Task<Void, Never>?) in
            guard var entry = s.entries[id] else { throw Self.unknown(id) }
            let task = entry.task
            if entry.status == .running {
                entry.status = .stopped
                entry.endedAt = Date()
            }
            entry.task = nil
            s.entries[id] = entry
            return (entry, task)
        }
        task?.cancel()
        return Self.json(entry)
    }

    /// Stops every drive and refuses new ones (call before closing the service).
    public func stopAll() {
        let tasks = state.withLock { s -> [Task<Void, Never>] in
            s.closed = true
            var tasks: [Task<Void, Never>] = []
            for id in s.order {
                guard var entry = s.entries[id] else { continue }
                if let task = entry.task { tasks.append(task) }
                if entry.status == .running {
                    entry.status = .stopped
                    entry.endedAt = Date()
                }
                entry.task = nil
                s.entries[id] = entry
            }
            return tasks
        }
        for task in tasks { task.cancel() }
    }

    /// Simulations currently running.
    public var runningCount: Int {
        state.withLock { s in s.entries.values.reduce(0) { $0 + ($1.status == .running ? 1 : 0) } }
    }

    // MARK: - The drive

    /// Sends `updates` at their simulated times divided by `timeScale`, measured from now.
    func drive(id: String, updates: [LocationUpdate], timeScale: Double) async {
        guard let first = updates.first else {
            finish(id, status: .finished, error: nil)
            return
        }
        let clock = ContinuousClock()
        let origin = clock.now
        for update in updates {
            let offset = update.time.timeIntervalSince(first.time) / timeScale
            do {
                try await Task.sleep(until: origin.advanced(by: .seconds(offset)), clock: clock)
            } catch {
                return  // cancelled: stop(id:) already set the status
            }
            guard isRunning(id) else { return }
            do throws(GeofencingError) {
                // The simulated device runs on its own (scaled) clock: never refused as future-dated.
                let result = try service.processSimulated([update])
                if let rejection = result.rejections.first { throw rejection.error }
                record(id, update: update, events: result.events.count, rejection: nil)
                onAccepted?(update)
            } catch {
                switch error.code {
                case .consentMissing, .notConfigured, .incompatibleStorage:
                    finish(id, status: .failed, error: error.message)
                    return
                default:
                    record(id, update: update, events: 0, rejection: error.description)
                }
            }
        }
        finish(id, status: .finished, error: nil)
    }

    func isRunning(_ id: String) -> Bool {
        state.withLock { $0.entries[id]?.status == .running }
    }

    func record(_ id: String, update: LocationUpdate, events: Int, rejection: String?) {
        state.withLock { s in
            guard var entry = s.entries[id] else { return }
            entry.sent += 1
            entry.events += events
            if let rejection {
                entry.rejected += 1
                entry.lastError = rejection
            } else {
                entry.position = update
            }
            s.entries[id] = entry
        }
    }

    func finish(_ id: String, status: Status, error: String?) {
        state.withLock { s in
            guard var entry = s.entries[id], entry.status == .running else { return }
            entry.status = status
            entry.endedAt = Date()
            entry.task = nil
            if let error { entry.lastError = error }
            s.entries[id] = entry
            forgetOldEnded(&s)
        }
    }

    func forgetOldEnded(_ s: inout State) {
        let ended = s.order.filter { s.entries[$0]?.status != .running }
        guard ended.count > keptEnded else { return }
        let forget = Set(ended.prefix(ended.count - keptEnded))
        for id in forget { s.entries[id] = nil }
        s.order.removeAll { forget.contains($0) }
    }

    static func unknown(_ id: String) -> Problem {
        Problem.notFound("no simulation \"\(id)\"; GET /v1/simulations lists them")
    }

    /// The JSON of one simulation: `{"id","deviceId","status","speed","interval","timeScale","updates",
    /// "sent","rejected","events","startedAt","endedAt"?,"position"?,"error"?}`.
    static func json(_ entry: Entry) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(entry.id),
            "deviceId": .string(entry.request.device.rawValue),
            "status": .string(entry.status.rawValue),
            "speed": .double(entry.request.speed),
            "interval": .double(entry.request.interval),
            "timeScale": .double(entry.request.timeScale),
            "updates": .integer(Int64(entry.total)),
            "sent": .integer(Int64(entry.sent)),
            "rejected": .integer(Int64(entry.rejected)),
            "events": .integer(Int64(entry.events)),
            "startedAt": .string(RFC3339.string(from: entry.startedAt)),
        ]
        if let ended = entry.endedAt { object["endedAt"] = .string(RFC3339.string(from: ended)) }
        if let position = entry.position {
            object["position"] = .object([
                "latitude": .double(position.coordinate.latitude),
                "longitude": .double(position.coordinate.longitude),
                "time": .string(RFC3339.string(from: position.time)),
            ])
        }
        if let error = entry.lastError { object["error"] = .string(error) }
        return .object(object)
    }
}
