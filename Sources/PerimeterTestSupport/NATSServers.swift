import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `nats-server` process for tests: JetStream on, listening on free loopback ports, its store
/// and log in a temporary folder, stopped (and its folder removed) by ``stop()``, by release, or at the
/// latest when the test process exits.
///
/// Tests that need one turn themselves off with ``NATSServer/unavailableReason`` when the binary is
/// not installed (`make deps` installs Debian's `nats-server`).
public final class NATSServer: @unchecked Sendable {
    /// Where the binary is: `$NATS_SERVER`, else the first `nats-server` on `PATH`, `/usr/sbin` or
    /// `/usr/local/bin`; `nil` when there is none.
    public static let binary: String? = {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["NATS_SERVER"], !path.isEmpty {
            return FileManager.default.isExecutableFile(atPath: path) ? path : nil
        }
        let folders = (environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/local/bin", "/usr/local/sbin"]
        return folders.map { "\($0)/nats-server" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Why NATS tests cannot run here, or `nil` when they can (for `.disabled(if:)` / `.enabled(if:)`).
    public static var unavailableReason: String? {
        binary == nil ? "nats-server is not installed (make deps installs it; or set NATS_SERVER)" : nil
    }

    /// The server's name (unique within its cluster).
    public let name: String
    /// The client port on 127.0.0.1.
    public let port: Int
    /// The cluster (route) port, when it is part of a cluster.
    public let clusterPort: Int?
    /// The folder with its configuration, log and JetStream store.
    public let folder: URL
    private let configuration: String
    private let lock = NSLock()
    private var process: Process?

    /// `nats://127.0.0.1:PORT`.
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// The server's log so far (for a failing test's message).
    public var log: String { (try? String(contentsOf: folder.appendingPathComponent("server.log"), encoding: .utf8)) ?? "" }

    /// Starts a single server with JetStream; `extraConfiguration` is appended to its configuration
    /// file (e.g. a `mappings { … }` block). On `port` when given (one try: a client may already be
    /// waiting for that port), else on a free one.
    public static func start(name: String = "n1", port: Int? = nil, extraConfiguration: String = "") throws -> NATSServer {
        var lastError: Error?
        for _ in 0..<(port == nil ? 3 : 1) {   // a free port can be taken by someone else before the server binds it
            let server = try NATSServer(name: name, port: try port ?? freePort(), cluster: nil, extraConfiguration: extraConfiguration)
            do {
                try server.launch()
                try server.waitUntilReady()
                return server
            } catch {
                lastError = error
                server.stop()
            }
        }
        throw lastError!
    }

    init(name: String, port: Int, cluster: (name: String, port: Int, routes: [Int])?, extraConfiguration: String) throws {
        guard let binary = NATSServer.binary else { throw NATSServerError(NATSServer.unavailableReason!) }
        _ = binary
        self.name = name
        self.port = port
        clusterPort = cluster?.port
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("perimeter-nats-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var text = """
            server_name: \(name)
            listen: 127.0.0.1:\(port)
            jetstream {
                store_dir: "\(folder.appendingPathComponent("store").path)"
                max_memory_store: 256MB
                max_file_store: 1GB
            }

            """
        if let cluster {
            let routes = cluster.routes.map { "nats-route://127.0.0.1:\($0)" }.joined(separator: ", ")
            text += """
                cluster {
                    name: \(cluster.name)
                    listen: 127.0.0.1:\(cluster.port)
                    routes: [\(routes)]
                }

                """
        }
        configuration = text + extraConfiguration + "\n"
        try configuration.write(to: folder.appendingPathComponent("server.conf"), atomically: true, encoding: .utf8)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    func launch() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: NATSServer.binary!)
        process.arguments = ["-c", folder.appendingPathComponent("server.conf").path,
                             "-l", folder.appendingPathComponent("server.log").path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        lock.withLock { self.process = process }
        NATSServer.registry.add(process.processIdentifier, folder: folder)
    }

    /// Waits (at most `seconds`) until the server accepts clients: its log says so after the first
    /// `logOffset` characters (the log of an earlier run of the same server comes before).
    func waitUntilReady(seconds: Double = 30, logOffset: Int = 0) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if log.dropFirst(logOffset).contains("Server is ready") { return }
            if let process = lock.withLock({ self.process }), !process.isRunning {
                throw NATSServerError("nats-server \(name) exited during start-up:\n\(log)")
            }
            usleep(20_000)
        }
        throw NATSServerError("nats-server \(name) was not ready within \(seconds) s:\n\(log)")
    }

    /// Whether the process runs.
    public var isRunning: Bool { lock.withLock { process?.isRunning ?? false } }

    /// Stops the server (SIGTERM, then SIGKILL after 5 s) and waits for it. Idempotent.
    public func stop() {
        guard let process = lock.withLock({ () -> Process? in defer { self.process = nil }; return self.process }) else { return }
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        process.waitUntilExit()
        NATSServer.registry.remove(process.processIdentifier)
    }

    /// Kills the server at once (SIGKILL), as a crash would; its store stays for ``restart()``.
    public func kill9() {
        guard let process = lock.withLock({ () -> Process? in defer { self.process = nil }; return self.process }) else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        NATSServer.registry.remove(process.processIdentifier)
    }

    /// Starts the stopped or killed server again on the same ports and store.
    public func restart() throws {
        stop()
        let offset = log.count
        try launch()
        try waitUntilReady(logOffset: offset)
    }

    /// A TCP port on 127.0.0.1 that was free a moment ago. Free for a server this test starts next;
    /// for a port that must stay unanswered, use ``withRefusingPort(_:)``.
    public static func freePort() throws -> Int {
        let (fd, port) = try bindEphemeralPort()
        close(fd)
        return port
    }

    /// Runs `body` with a TCP port on 127.0.0.1 where every connection is refused for as long as `body`
    /// runs. The port is bound, not listening, by this process (without `SO_REUSEADDR`), so no other
    /// process — another test's server — can take it meanwhile, as it could a ``freePort()``.
    public static func withRefusingPort<R>(_ body: (Int) throws -> R) throws -> R {
        let (fd, port) = try bindEphemeralPort()
        defer { close(fd) }
        return try body(port)
    }

    /// A TCP socket bound to a port the kernel chose on 127.0.0.1, and that port.
    private static func bindEphemeralPort() throws -> (socket: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw NATSServerError("socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { close(fd); throw NATSServerError("bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Every server process still running, killed when the test process exits, so a suite's shared
    /// server (or a failed test's) never outlives the run.
    static let registry = ProcessRegistry()
}

/// A cluster of ``NATSServer``s with routes to each other (three for replicated, R3, streams).
public final class NATSCluster: @unchecked Sendable {
    /// The servers, in start order.
    public let servers: [NATSServer]

    /// Every server's URL, for a client's server list.
    public var urls: [String] { servers.map(\.url) }

    /// Starts `size` servers in one cluster and waits until each accepts clients. JetStream needs a
    /// few more seconds to elect its meta leader: retry the first JetStream request.
    public static func start(size: Int = 3, name: String = "perimeter-test") throws -> NATSCluster {
        var lastError: Error?
        for _ in 0..<3 {
            let clusterPorts = try (0..<size).map { _ in try NATSServer.freePort() }
            let servers = try (0..<size).map { i in
                try NATSServer(name: "n\(i + 1)", port: try NATSServer.freePort(),
                               cluster: (name: name, port: clusterPorts[i], routes: clusterPorts), extraConfiguration: "")
            }
            do {
                for server in servers { try server.launch() }
                for server in servers { try server.waitUntilReady() }
                return NATSCluster(servers: servers)
            } catch {
                lastError = error
                servers.forEach { $0.stop() }
            }
        }
        throw lastError!
    }

    init(servers: [NATSServer]) { self.servers = servers }

    deinit { stop() }

    /// Stops every server.
    public func stop() { servers.forEach { $0.stop() } }
}

/// A test-infrastructure failure (not a finding about the code under test).
public struct NATSServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String
    init(_ description: String) { self.description = description }
}

/// Process ids to kill at exit.
final class ProcessRegistry: @unchecked Sendable {
    private let lock = NSLock()
    private var pids: [Int32: URL] = [:]
    private var installed = false

    func add(_ pid: Int32, folder: URL) {
        lock.withLock {
            pids[pid] = folder
            if !installed {
                installed = true
                atexit { NATSServer.registry.killAll() }
            }
        }
    }

    func remove(_ pid: Int32) { lock.withLock { _ = pids.removeValue(forKey: pid) } }

    /// Kills what still runs and removes its folder (a shared server is never released).
    func killAll() {
        let all = lock.withLock { pids }
        for (pid, folder) in all {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            try? FileManager.default.removeItem(at: folder)
        }
    }
}
