import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs a program as a child process (optionally pinned to one core with `taskset`), capturing its
/// standard output, and reports its own peak resident set size from `wait4` (per child, unlike
/// `getrusage(RUSAGE_CHILDREN)`, which keeps the largest child seen so far).
public enum ChildProcess {
    /// What a child did.
    public struct Outcome: Sendable {
        /// Exit status (128 + signal number when killed by a signal; -1 when it could not start).
        public var status: Int32
        /// Standard output.
        public var output: String
        /// Peak resident set size in bytes.
        public var peakResidentBytes: Int
        /// Wall-clock seconds.
        public var seconds: Double
        /// Its CPU time (`wait4`'s rusage: the child alone, with any children it waited for).
        public var cpu = CPUTime(user: 0, system: 0)
    }

    /// Runs `arguments[0]` (looked up in `PATH`) with the rest as its arguments.
    /// - Parameter core: pin to this CPU with `taskset -c` when `taskset` exists.
    public static func run(_ arguments: [String], core: Int? = nil, environment: [String: String] = [:]) -> Outcome {
        var argv = arguments
        if let core, FileManager.default.isExecutableFile(atPath: "/usr/bin/taskset") {
            argv = ["/usr/bin/taskset", "-c", String(core)] + argv
        }
        let outPath = NSTemporaryDirectory() + "perimeter-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
        defer { unlink(outPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { cArgs.forEach { free($0) }; cEnv.forEach { free($0) } }
        var pid: pid_t = 0
        let t0 = Measure.wallSeconds()
        let rc = posix_spawnp(&pid, argv[0], &actions, nil, cArgs, cEnv)
        guard rc == 0 else { return Outcome(status: -1, output: "", peakResidentBytes: 0, seconds: 0) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = Measure.wallSeconds() - t0
        let output = (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? ""
        let exited = status & 0x7f == 0
        let code = exited ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        return Outcome(status: code, output: output, peakResidentBytes: Int(usage.ru_maxrss) * 1024, seconds: seconds,
                       cpu: CPUTime(usage))
    }

    /// Whether `name` is an executable in `PATH` (or a path to one).
    public static func exists(_ name: String) -> Bool {
        if name.contains("/") { return FileManager.default.isExecutableFile(atPath: name) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }

    /// The last line of `output` that parses as a JSON object.
    public static func lastJSONObject(_ output: String) -> [String: Any]? {
        for line in output.split(separator: "\n").reversed() where line.hasPrefix("{") {
            if let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] { return object }
        }
        return nil
    }
}

extension Dictionary where Key == String, Value == Any {
    /// The number under `key`, if any.
    func number(_ key: String) -> Double? { (self[key] as? NSNumber)?.doubleValue }
}
