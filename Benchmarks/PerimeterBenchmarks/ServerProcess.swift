import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `perimeter serve` as a child process of the benchmark, on a free loopback port, allowed on every
/// core (the benchmark process itself is pinned to one, and children inherit that).
final class ServerProcess {
    /// A server that could not be started, and why.
    struct StartError: Error, CustomStringConvertible {
        /// What went wrong, with the server's own output.
        var description: String
    }

    /// The child's process id.
    let pid: pid_t
    /// The port it listens on.
    let port: UInt16
    /// Where its standard output and error go.
    let logPath: String
    private var exited = false

    /// Starts `binary serve` with `arguments` (`--port 0` is added) and waits until it prints the URL
    /// it serves, at most `timeout` seconds (loading the fences comes first).
    init(binary: String, arguments: [String], logPath: String, timeout: Double) throws(StartError) {
        // PERIMETER_BENCH_SERVE_ARGS: extra `serve` flags for experiments (e.g. "--threads 1").
        let extra = ProcessInfo.processInfo.environment["PERIMETER_BENCH_SERVE_ARGS"]?.split(separator: " ").map(String.init) ?? []
        var argv = [binary, "serve", "--port", "0"] + arguments + extra
        let cores = ProcessInfo.processInfo.activeProcessorCount
        if cores > 1, FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") {
            argv = ["/usr/bin/taskset", "-c", "0-\(cores - 1)"] + argv
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let cArgs = argv.map { strdup($0) } + [nil]
        defer { cArgs.forEach { free($0) } }
        var child: pid_t = 0
        guard posix_spawn(&child, argv[0], &actions, nil, cArgs, environ) == 0 else {
            throw StartError(description: "cannot start \(argv[0])")
        }
        pid = child
        self.logPath = logPath
        let deadline = Measure.wallSeconds() + timeout
        var found: UInt16?
        while found == nil {
            let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: "serving http://127.0.0.1:") {
                found = UInt16(text[range.upperBound...].prefix { $0.isNumber })
                if found != nil { break }
            }
            var status: Int32 = 0
            if waitpid(child, &status, WNOHANG) == child {
                exited = true
                throw StartError(description: "perimeter serve exited before serving: \(text.suffix(600))")
            }
            if Measure.wallSeconds() > deadline {
                kill(child, SIGKILL)
                _ = waitpid(child, &status, 0)
                exited = true
                throw StartError(description: "perimeter serve did not serve within \(Int(timeout)) s: \(text.suffix(600))")
            }
            usleep(50_000)
        }
        port = found ?? 0
    }

    /// Stops the server with SIGTERM (graceful: drain, flush the store) and waits up to `timeout`
    /// seconds, then kills it. Returns its exit status (128 + signal when killed by one).
    @discardableResult
    func stop(timeout: Double = 60) -> Int32 {
        guard !exited else { return -1 }
        exited = true
        kill(pid, SIGTERM)
        let deadline = Measure.wallSeconds() + timeout
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Measure.wallSeconds() > deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(20_000)
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }

    deinit { stop(timeout: 5) }
}
