import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterNATS
import PerimeterTestSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A `perimeter worker` child process whose standard output is collected line by line.
final class WorkerProcess: @unchecked Sendable {
    let id: String
    private let process = Process()
    private let lines = Mutex<[String]>([])
    private let partial = Mutex<Data>(Data())
    private let errors = Pipe()
    private let errorBytes = Mutex<Data>(Data())

    /// The built `perimeter` executable next to the test bundle.
    static var binary: URL? {
        BuildProducts.locate("perimeter") { url in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && !isDirectory.boolValue
                && FileManager.default.isExecutableFile(atPath: url.path)
        }
    }

    init(_ binary: URL, id: String, arguments: [String]) throws {
        self.id = id
        process.executableURL = binary
        process.arguments = ["worker", "--id", id] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Each pipe is read by a thread of its own with blocking reads until the end of the output (the
        // child's exit), holding its handle until then: so a descriptor is never closed while something
        // still waits on it. (`readabilityHandler` registers the descriptor with Dispatch's event loop, and
        // when this object went away first the pipe was closed under that registration; a test process
        // crashed in `_dispatch_event_loop_drain` while these tests ran.) The threads hold this object weakly.
        Self.read(output.fileHandleForReading, name: "worker \(id) stdout") { [weak self] data in
            guard let self else { return }
            partial.withLock { buffer in
                buffer.append(data)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    lines.withLock { $0.append(line) }
                }
            }
        }
        Self.read(errors.fileHandleForReading, name: "worker \(id) stderr") { [weak self] data in
            self?.errorBytes.withLock { $0.append(data) }
        }
    }

    /// Calls `body` with each chunk read from `handle`, on a thread of its own, until the end of the output.
    private static func read(_ handle: FileHandle, name: String, _ body: @escaping @Sendable (Data) -> Void) {
        let thread = Thread {
            // read(2) itself: FileHandle's reads wait for a full buffer or the end.
            withExtendedLifetime(handle) {
                var buffer = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { return }
                    body(Data(buffer[0..<count]))
                }
            }
        }
        thread.name = name
        thread.start()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    var output: [String] { lines.withLock { $0 } }

    /// The partitions of the last "owns" line printed (empty before any).
    var owned: [Int] {
        guard let line = output.last(where: { $0.contains(" owns ") }),
              let owns = line.range(of: " owns "), let colon = line.range(of: ": ", range: owns.upperBound..<line.endIndex),
              let list = line[colon.upperBound...].split(separator: " ").first else { return [] }
        return list == "none" ? [] : list.split(separator: ",").compactMap { Int($0) }
    }

    /// kill -9.
    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, and the exit status once it ended (nil when it did not within `seconds`).
    func terminate(seconds: Double = 20) -> Int32? {
        process.terminate()
        guard waitUntil(seconds: seconds, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// What it wrote to standard error so far.
    var standardError: String { errorBytes.withLock { String(decoding: $0, as: UTF8.self) } }
}

@Suite("Worker processes (perimeter worker, kill -9)", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct WorkerProcessTests {
    static let partitions = 8
    static let lease = 2.0

    /// Squares on the equator (GeoJSON features, as an API node writes them to the fences bucket); the
    /// depot has a dwell time so dwells fire from updates.
    static let fenceFeatures: [(id: String, json: [UInt8])] = [
        ("depot", square("depot", longitude: 0, half: 0.0025, dwell: 20)),
        ("yard é", square("yard é", longitude: 0.01, half: 0.002, dwell: nil)),
    ]

    static func square(_ id: String, longitude: Double, half: Double, dwell: Int?) -> [UInt8] {
        let ring = [[longitude - half, -half], [longitude + half, -half], [longitude + half, half], [longitude - half, half], [longitude - half, -half]]
        let coordinates = ring.map { "[\($0[0]),\($0[1])]" }.joined(separator: ",")
        let properties = dwell.map { #"{"perimeter:dwell":\#($0)}"# } ?? "{}"
        return Array(#"{"type":"Feature","id":"\#(id)","geometry":{"type":"Polygon","coordinates":[[\#(coordinates)]]},"properties":\#(properties)}"#.utf8)
    }

    /// The single-process engine over `updates`, with the fences added in the bucket's order.
    static func reference(_ updates: [LocationUpdate]) throws -> [GeofenceEvent] {
        try referenceEngine(updates).events
    }

    /// The single-process engine after `updates`, and its events.
    static func referenceEngine(_ updates: [LocationUpdate]) throws -> (engine: DetectionEngine, events: [GeofenceEvent]) {
        var engine = DetectionEngine(fences: [])
        for (_, json) in fenceFeatures {
            let loaded = FenceLoader().load(GeoJSONReader().read(json))
            guard let fence = loaded.fences.first, !loaded.hasErrors else { throw Failed("fence does not load: \(loaded.problems)") }
            engine.upsert(fence)
        }
        var events: [GeofenceEvent] = []
        for update in updates { _ = engine.process(update, into: &events) }
        return (engine, events)
    }

    /// Whether every partition's latest tick records at least fence revision `revision` (so updates
    /// published from now on are applied with the fences).
    static func fencesInEffect(js: JetStream, layout: ClusterLayout, revision: UInt64) -> Bool {
        (0..<partitions).allSatisfy { partition in
            guard let message = try? js.lastMessage(stream: layout.inputStream, subject: layout.tickSubject(partition)),
                  case .tick(_, _, _, let fenceRevision)? = try? InputRecord(message, in: layout) else { return false }
            return fenceRevision >= revision
        }
    }

    /// Two worker processes, updates streaming in: kill -9 of one mid-stream, the other takes its
    /// partitions within the lease time plus a few seconds; then everything (workers and the NATS
    /// server) is killed and restarted, and more updates follow. The events stream holds exactly the
    /// single-process events — 0 lost, 0 duplicate ids, per-device order — and nothing re-fires for
    /// devices that were inside across the restart.
    @Test func killingAWorkerAndThenEverythingLosesAndDoublesNothing() async throws {
        guard let binary = WorkerProcess.binary else { throw Failed("the perimeter executable is not built beside the tests") }
        try await offThePool {
            let server = try NATSServer.start(name: "worker-processes")
            defer { server.stop() }
            let prefix = "p\(UUID().uuidString.prefix(8).lowercased())"
            let layout = ClusterLayout(prefix: prefix, partitioning: DevicePartitioning(count: Self.partitions)!)
            var js = try JetStream(NATSConnection(urls: [server.url], name: "worker-process-test"))
            var resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(Int64(Self.lease)))
            var fenceRevision: UInt64 = 0
            for (id, json) in Self.fenceFeatures { fenceRevision = try resources.fences.put(FenceFeed.key(of: FenceID(id)), json) }

            // Data time starts now and the workers' L is 10 minutes: ticks (now - L) fall before every
            // update and fire nothing, so the engine without ticks is the reference.
            let updates = Drive.updatesStartingNow(devices: 24, seed: 19)
            let expected = try Self.reference(updates)
            try check(Set(expected.map(\.kind)).isSuperset(of: [.entry, .exit, .dwell]), "entries, exits and dwells")
            let arguments = ["--nats", server.url, "--partitions", "\(Self.partitions)", "--lease", "\(Int(Self.lease))", "--prefix", prefix,
                             "--lateness", "600"]

            var w1 = try WorkerProcess(binary, id: "w1", arguments: arguments)
            var w2 = try WorkerProcess(binary, id: "w2", arguments: arguments)
            defer {
                w1.kill9()
                w2.kill9()
            }
            let shared = waitUntil(seconds: 30) {
                let (a, b) = (w1.owned, w2.owned)
                return a.count == 4 && b.count == 4 && Set(a + b).count == Self.partitions
            }
            try check(shared, "two processes hold half each: \(w1.owned) \(w2.owned)\n\(w1.output)\n\(w2.output)")
            try check(waitUntil(seconds: 20) { Self.fencesInEffect(js: js, layout: layout, revision: fenceRevision) },
                      "every partition's ticks carry the fences")

            // Updates stream in; w1 is killed -9 a third of the way.
            let third = updates.count / 3
            var published = 0
            func publish(upTo end: Int) throws {
                while published < end {
                    let next = min(published + 50, end)
                    try publishInput(Array(updates[published..<next]), js: js, layout: layout)
                    published = next
                    usleep(20_000)
                }
            }
            try publish(upTo: third)
            let crashed = w1.owned
            w1.kill9()
            let killedAt = ContinuousClock.now
            try publish(upTo: 2 * third)
            try check(waitUntil(seconds: 30) { w2.owned.count == Self.partitions }, "w2 took every partition: \(w2.output)")
            let failover = ContinuousClock.now - killedAt
            try check(failover < .seconds(Int64(Self.lease)) + .seconds(4), "within the lease time + 4 s: \(failover)")
            print("worker processes: w2 took w1's \(crashed.count) partitions \(failover) after kill -9 (lease \(Self.lease) s)")
            let soFar = try Self.reference(Array(updates[..<published])).count
            let caughtUp = waitUntil(seconds: 30) { ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(soFar) }
            try check(caughtUp, "w2 published the events of everything so far")

            // Devices inside a fence when everything dies must not enter again after the restart.
            let insideAtRestart = try Self.referenceEngine(Array(updates[..<published])).engine.deviceSnapshots
                .filter { !$0.memberships.isEmpty }.map(\.device)
            try check(insideAtRestart.count >= 3, "devices inside across the restart: \(insideAtRestart)")

            // Everything dies at once: the other worker and the NATS server; then all comes back.
            w2.kill9()
            server.kill9()
            try server.restart()
            js = try JetStream(NATSConnection(urls: [server.url], name: "worker-process-test-2"))
            resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(Int64(Self.lease)))
            w1 = try WorkerProcess(binary, id: "w1", arguments: arguments)
            w2 = try WorkerProcess(binary, id: "w2", arguments: arguments)
            try check(waitUntil(seconds: 30) { Set(w1.owned + w2.owned).count == Self.partitions }, "the restarted workers hold every partition")
            try publish(upTo: updates.count)
            let done = waitUntil(seconds: 60) {
                ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(expected.count)
            }
            try check(done, "every event published after the restart")
            usleep(1_000_000)   // anything doubled would show up now
            try check(w1.terminate() == 0 && w2.terminate() == 0, "SIGTERM stops gracefully: \(w1.output) \(w2.output)")
            try check(w1.output.last?.contains("stopped") == true, "a graceful stop says so: \(w1.output)")

            let stored = try storedEvents(js: js, layout: layout)
            try check(Set(stored.map(\.id)).count == stored.count, "0 duplicate event ids")
            try check(Set(stored.map(\.id)) == Set(expected.map(\.id)), "0 lost: \(stored.count) stored, \(expected.count) expected")
            try check(Set(stored) == Set(expected), "the same events in every field")
            try check(perDevice(stored) == perDevice(expected), "per-device order")
            for device in insideAtRestart {
                let entries = stored.filter { $0.device == device && $0.kind == .entry }.count
                try check(entries == expected.filter { $0.device == device && $0.kind == .entry }.count, "\(device) did not enter again")
            }
            _ = resources
        }
    }
}

extension WorkerProcessTests {
    /// Publishes `updates` in chunks, resending a chunk under the same message ids until it is stored
    /// (while a server is down, a request can time out or find no leader).
    static func publishRetrying(_ updates: ArraySlice<LocationUpdate>, js: JetStream, layout: ClusterLayout) throws {
        for start in stride(from: updates.startIndex, to: updates.endIndex, by: 50) {
            let chunk = Array(updates[start..<min(start + 50, updates.endIndex)])
            let deadline = Date().addingTimeInterval(60)
            while true {
                do {
                    try publishInput(chunk, js: js, layout: layout)
                    break
                } catch {
                    guard Date() < deadline else { throw error }
                    usleep(250_000)
                }
            }
            usleep(20_000)
        }
    }

    /// A three-server NATS cluster with R3 streams and buckets, two worker processes: kill -9 of one
    /// NATS server mid-stream; the events stream still holds exactly the single-process events, every
    /// one stored within 45 s of the kill.
    @Test func killingOneOfThreeNATSServersLosesAndDoublesNothing() async throws {
        guard let binary = WorkerProcess.binary else { throw Failed("the perimeter executable is not built beside the tests") }
        try await offThePool {
            let cluster = try NATSCluster.start(size: 3, name: "worker-processes")
            defer { cluster.stop() }
            let prefix = "q\(UUID().uuidString.prefix(8).lowercased())"
            let layout = ClusterLayout(prefix: prefix, partitioning: DevicePartitioning(count: Self.partitions)!)
            let lease = 5
            let js = try JetStream(NATSConnection(urls: cluster.urls, name: "worker-process-test"))
            var opened: ClusterResources?
            let deadline = Date().addingTimeInterval(30)
            while opened == nil {   // the cluster elects its meta leader first
                do {
                    opened = try ClusterResources.open(on: js, layout: layout, replicas: 3, leaseDuration: .seconds(Int64(lease)))
                } catch {
                    if Date() > deadline { throw error }
                    usleep(250_000)
                }
            }
            let resources = opened!
            var fenceRevision: UInt64 = 0
            for (id, json) in Self.fenceFeatures { fenceRevision = try resources.fences.put(FenceFeed.key(of: FenceID(id)), json) }
            let updates = Drive.updatesStartingNow(devices: 24, seed: 23)
            let expected = try Self.reference(updates)
            let arguments = ["--nats", cluster.urls.joined(separator: ","), "--replicas", "3", "--partitions", "\(Self.partitions)",
                             "--lease", "\(lease)", "--prefix", prefix, "--lateness", "600"]
            let w1 = try WorkerProcess(binary, id: "w1", arguments: arguments)
            let w2 = try WorkerProcess(binary, id: "w2", arguments: arguments)
            defer {
                w1.kill9()
                w2.kill9()
            }
            let startedAt = ContinuousClock.now
            // Generous: under a full test run's load, six NATS servers share two cores with everything else.
            try check(waitUntil(seconds: 120) { Set(w1.owned + w2.owned).count == Self.partitions && w1.owned.count == 4 },
                      "two processes hold half each: \(w1.output)\n\(w2.output)\n\(w1.standardError)\n\(w2.standardError)")
            print("worker processes: two workers on three servers hold half each \(ContinuousClock.now - startedAt) after they started")
            try check(waitUntil(seconds: 30) { Self.fencesInEffect(js: js, layout: layout, revision: fenceRevision) },
                      "every partition's ticks carry the fences")
            let half = updates.count / 2
            try Self.publishRetrying(updates[..<half], js: js, layout: layout)
            let storedBefore = try js.streamState(layout.eventStream).messages
            cluster.servers[1].kill9()
            let killedAt = ContinuousClock.now
            print("worker processes: NATS server killed at \(Date())")
            // The first event stored after the kill: the recovery time that matters to a client.
            let firstStored = Mutex<Duration?>(nil)
            let watching = Thread {
                while firstStored.withLock({ $0 == nil }) && ContinuousClock.now - killedAt < .seconds(120) {
                    if ((try? js.streamState(layout.eventStream).messages) ?? 0) > storedBefore {
                        firstStored.withLock { $0 = ContinuousClock.now - killedAt }
                    }
                    usleep(50_000)
                }
            }
            watching.start()
            try Self.publishRetrying(updates[half...], js: js, layout: layout)
            let published = ContinuousClock.now - killedAt
            // What the design allows (docs/cluster.md, "Recovery after a NATS server dies"): new stream
            // leaders (up to about 11 s measured), the lease time when the leases' election outlasted it
            // (5 s here), a few overlapping consumer creations for each partition taken or reopened, and
            // the replay — under the load of a shared machine.
            let done = waitUntil(seconds: 45) {
                ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(expected.count)
            }
            let first = firstStored.withLock { $0 }
            print("worker processes: one NATS server of three killed; the first event stored \(first.map { "\($0)" } ?? "-") later, "
                  + "the input published \(published) later, every event stored \(ContinuousClock.now - killedAt) later")
            try check(done, "every event published: \(w1.output)\n\(w2.output)")
            usleep(1_000_000)
            let stoppingAt = ContinuousClock.now
            let statuses = (w1.terminate(seconds: 60), w2.terminate(seconds: 60))
            print("worker processes: graceful stops took \(ContinuousClock.now - stoppingAt)")
            try check(statuses == (0, 0), "SIGTERM stops gracefully: \(statuses)")
            print("worker processes, w1:\n" + w1.output.joined(separator: "\n") + "\nw2:\n" + w2.output.joined(separator: "\n"))
            var read: [GeofenceEvent]?
            let readBy = Date().addingTimeInterval(60)
            while read == nil {   // creating a consumer on an R3 stream can time out while the cluster settles
                do {
                    read = try storedEvents(js: js, layout: layout)
                } catch {
                    if Date() > readBy { throw error }
                    usleep(500_000)
                }
            }
            let stored = read!
            try check(Set(stored.map(\.id)).count == stored.count, "0 duplicate event ids")
            try check(Set(stored) == Set(expected), "0 lost: \(stored.count) stored, \(expected.count) expected")
            try check(perDevice(stored) == perDevice(expected), "per-device order")
        }
    }
}

@Suite("perimeter worker flags")
struct WorkerCommandTests {
    static func run(_ arguments: [String]) throws -> (status: Int32, error: String) {
        guard let binary = WorkerProcess.binary else { throw Failed("the perimeter executable is not built beside the tests") }
        let process = Process()
        process.executableURL = binary
        process.arguments = ["worker"] + arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    @Test func badFlagsAreRefusedWithWhatIsWrong() throws {
        let cases: [([String], String)] = [
            ([], "--nats URL is required"),
            (["--nats", "nats://127.0.0.1:1", "--partitions", "0"], "--partitions must be a number from 1"),
            (["--nats", "nats://127.0.0.1:1", "--partitions", "2.5"], "--partitions must be a whole number"),
            (["--nats", "nats://127.0.0.1:1", "--lease", "soon"], "--lease must be a number"),
            (["--nats", "nats://127.0.0.1:1", "--prefix", "a.b"], "--prefix must be letters"),
            (["--nats", "nats://127.0.0.1:1", "--replicas", "9"], "--replicas must be a number from 1 to 5"),
            (["--nats", "localhost"], "--nats needs URLs like nats://HOST:PORT"),
            (["--nats", "nats://127.0.0.1:1", "--frobnicate"], "unknown option '--frobnicate'"),
            (["--nats", "nats://127.0.0.1:1", "--input-max-age", "soon"], "--input-max-age must be an age like 90s"),
            (["--nats", "nats://127.0.0.1:1", "--events-max-age", "0.1s"], "--events-max-age must be an age"),
            (["--nats", "nats://127.0.0.1:1", "--input-max-bytes", "12"], "--input-max-bytes must be a size like 500M"),
            (["--nats", "nats://127.0.0.1:1", "--events-max-bytes", "lots"], "--events-max-bytes must be a size"),
        ]
        for (arguments, message) in cases {
            let (status, error) = try Self.run(arguments)
            try check(status == 64 && error.contains(message), "\(arguments): \(status) \(error)")
        }
    }

    @Test func anUnreachableClusterIsReportedNotCrashedOn() throws {
        try NATSServer.withRefusingPort { port in
            let (status, error) = try Self.run(["--nats", "nats://127.0.0.1:\(port)", "--wait-for-cluster", "0"])
            try check(status == 69 && error.contains("cannot open the cluster at nats://127.0.0.1:\(port)"), "\(status) \(error)")
            try check(!error.contains("trying again"), "no patience, no second try: \(error)")
            // With patience, each failed try is said, then the same failure.
            let (waited, said) = try Self.run(["--nats", "nats://127.0.0.1:\(port)", "--wait-for-cluster", "2.5"])
            try check(waited == 69 && said.contains("worker") && said.contains("the cluster is not ready, trying again: NATS: connect")
                      && said.contains("cannot open the cluster at nats://127.0.0.1:\(port)"), "\(waited) \(said)")
        }
    }

    /// Processes started together with their NATS server (a compose file) must not lose the race: a
    /// worker started before the server waits for it, then takes every partition.
    @Test(.disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
    func aWorkerStartedBeforeItsServerWaitsForIt() async throws {
        guard let binary = WorkerProcess.binary else { throw Failed("the perimeter executable is not built beside the tests") }
        try await offThePool {
            let port = try NATSServer.freePort()
            let worker = try WorkerProcess(binary, id: "early", arguments: ["--nats", "nats://127.0.0.1:\(port)", "--partitions", "4",
                                                                           "--lease", "5", "--wait-for-cluster", "60"])
            defer { worker.kill9() }
            try check(waitUntil(seconds: 30) { worker.standardError.contains("not ready, trying again") },
                      "the worker says it waits: \(worker.standardError)")
            let server = try NATSServer.start(name: "late", port: port)
            defer { server.stop() }
            try check(waitUntil(seconds: 60) { worker.owned.count == 4 }, "the worker took every partition: \(worker.output)\n\(worker.standardError)")
            try check(worker.terminate() == 0, "SIGTERM stops gracefully: \(worker.output)")
        }
    }
}
