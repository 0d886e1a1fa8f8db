import Foundation
import PerimeterCluster

/// `perimeter worker --nats URLS`: one worker of a cluster (docs/cluster.md) — holds the engine for the
/// partitions the cluster's assignment gives it, until SIGINT or SIGTERM.
struct WorkerCommand {
    static let help = """
    Usage: perimeter worker --nats URL[,URL...] [--id ID] [--partitions N] [--replicas N] [--lease SECONDS]
                            [--prefix NAME] [--lateness SECONDS] [--max-partitions N] [--wait-for-cluster SECONDS]
                            [--input-max-age AGE] [--input-max-bytes SIZE] [--events-max-age AGE]
                            [--events-max-bytes SIZE] [--update-retention]

    Runs one worker of a Perimeter cluster on NATS JetStream (docs/cluster.md): it announces itself, takes
    the partitions the cluster's assignment gives it (their latest snapshot, then the input after it),
    publishes their events, and hands partitions over as workers join or leave. It prints the partitions
    it owns whenever they change. SIGTERM or Ctrl-C stops gracefully: a snapshot of each partition, then
    its lease is released so another worker continues at once. Every process of one cluster must be given
    the same --partitions, --replicas, --lease, --prefix and retention flags (a process given other
    retention limits than the streams have is refused, naming the flag and both values).

    Options:
      --nats URL[,URL...]    NATS servers to connect to (required; e.g. nats://127.0.0.1:4222). Repeatable.
      --id ID                This worker's id, unique in the cluster (default: HOSTNAME-PID).
      --partitions N         Device partitions of the cluster (default 64; fixed for the life of its streams).
      --replicas N           Copies of every stream and bucket (default 1; 3 on a three-server cluster).
      --lease SECONDS        Lease time: how long a crashed worker's partitions wait before another takes
                             them (default 10).
      --prefix NAME          Subject prefix of the cluster's streams and buckets (default perimeter; letters,
                             digits, '-' and '_').
      --lateness SECONDS     L of the live-service rules: each partition's clock ticks to now - L and holds
                             the devices heard from within L (default 5).
      --max-partitions N     The most partitions this worker holds (default: all).
      --wait-for-cluster SECONDS
                             How long to keep trying while the cluster cannot be reached or is still electing
                             its leaders, a line on standard error per try (default 30; 0: fail at once).
    \(RetentionFlags.help)
      --update-retention     Change the streams' limits to the retention flags given here instead of
                             refusing to start when they differ (then restart the others with the same).
      -h, --help             Show this help.
    """

    var urls: [String]
    var layout: ClusterLayout
    var replicas: Int
    var retention: ClusterRetention
    var updatingRetention: Bool
    /// How long the start tries again while the cluster's failure is temporary.
    var patience: Duration
    var configuration: ClusterWorker.Configuration

    init?(_ arguments: [String]) throws {
        var args = Arguments(arguments, command: "worker")
        if args.wantsHelp() { return nil }
        urls = try args.options("nats").flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        guard !urls.isEmpty else { throw CommandLineError.usage("worker: --nats URL is required (the NATS servers of the cluster)") }
        if let bad = urls.first(where: { $0.isEmpty || !$0.contains(":") }) {
            throw CommandLineError.usage("worker: --nats needs URLs like nats://HOST:PORT, not '\(bad)'")
        }
        let id = try args.option("id") ?? "\(ProcessInfo.processInfo.hostName)-\(getpid())"
        guard !id.isEmpty else { throw CommandLineError.usage("worker: --id must not be empty") }
        let partitions = try WorkerCommand.integer(&args, "partitions", in: 1...65_536) ?? 64
        replicas = try WorkerCommand.integer(&args, "replicas", in: 1...5) ?? 1
        let lease = try args.number("lease", in: 1...3600) ?? 10
        let prefix = try args.option("prefix") ?? "perimeter"
        guard !prefix.isEmpty, prefix.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_")
                                                        || (0x30...0x39).contains($0) || (0x41...0x5a).contains($0) || (0x61...0x7a).contains($0) })
        else {
            throw CommandLineError.usage("worker: --prefix must be letters, digits, '-' and '_', not '\(prefix)'")
        }
        let lateness = try args.number("lateness", in: 0...86_400) ?? 5
        let maxPartitions = try WorkerCommand.integer(&args, "max-partitions", in: 1...65_536) ?? partitions
        retention = try RetentionFlags.parse(&args, command: "worker")
        updatingRetention = args.flag("update-retention")
        patience = .milliseconds(Int64((try args.number("wait-for-cluster", in: 0...86_400) ?? 30) * 1000))
        try args.finish()
        layout = ClusterLayout(prefix: prefix, partitioning: DevicePartitioning(count: partitions)!)
        configuration = ClusterWorker.Configuration(id: id, leaseDuration: .milliseconds(Int64(lease * 1000)),
                                                    maxPartitions: maxPartitions, allowedLateness: .milliseconds(Int64(lateness * 1000)))
    }

    /// `--name N` as a whole number within `range`.
    private static func integer(_ args: inout Arguments, _ name: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = try args.number(name, in: Double(range.lowerBound)...Double(range.upperBound)) else { return nil }
        guard value == value.rounded() else {
            throw CommandLineError.usage("worker: --\(name) must be a whole number, not \(value)")
        }
        return Int(value)
    }

    static func run(_ arguments: [String], console: Console) throws -> Int32 {
        guard let command = try WorkerCommand(arguments) else {
            console.print(help)
            return 0
        }
        let id = command.configuration.id
        let resources: ClusterResources
        do {
            resources = try ClusterResources.connect(urls: command.urls, name: "perimeter worker \(id)", layout: command.layout,
                                                     replicas: command.replicas, leaseDuration: command.configuration.leaseDuration,
                                                     retention: command.retention, updatingRetention: command.updatingRetention,
                                                     patience: command.patience) { error in
                console.complain("worker \(id): the cluster is not ready, trying again: \(error)")
            }
        } catch {
            // 69: the service (the NATS cluster) is unavailable or refuses this cluster's configuration.
            console.complain("worker: cannot open the cluster at \(command.urls.joined(separator: ",")): \(error)")
            return 69
        }
        let signals = StopSignals()
        defer { signals.restore() }
        var configuration = command.configuration
        if let flag = ProcessInfo.processInfo.environment["PERIMETER_WORKER_TRACE"], !flag.isEmpty, flag != "0" {
            // Timing lines for finding where a recovery spends its time (docs/cluster.md, "Worker process").
            configuration.trace = { line in console.print("perimeter: trace \(WorkerCommand.clockTime()) \(line)") }
        }
        // Lost input is always said, trace or not.
        configuration.warning = { line in console.complain("worker \(id): \(line)") }
        let worker = ClusterWorker(resources: resources, configuration: configuration)
        worker.start()
        console.print("perimeter: worker \(id) on \(command.urls.joined(separator: ",")) (\(command.layout.partitioning.count) partitions, prefix \(command.layout.prefix), lease \(format(command.configuration.leaseDuration))); SIGTERM or Ctrl-C stops gracefully")
        var owned: [Int] = []
        while !signals.wait(until: .now() + .milliseconds(200)) {
            let now = worker.ownedPartitions
            if now != owned {
                console.print(ownership(id: id, now: now, before: owned))
                owned = now
            }
        }
        console.print("perimeter: worker \(id) stopping: a snapshot and the release of \(worker.ownedPartitions.count) partitions")
        worker.stop(releasing: true)
        console.print("perimeter: worker \(id) stopped")
        return 0
    }

    /// `perimeter: worker ID owns N partitions: 0,2,5 (+5 -3)` — the line a change of ownership prints.
    static func ownership(id: String, now: [Int], before: [Int]) -> String {
        let added = Set(now).subtracting(before).sorted(), removed = Set(before).subtracting(now).sorted()
        var change: [String] = []
        if !added.isEmpty { change.append("+" + added.map(String.init).joined(separator: ",")) }
        if !removed.isEmpty { change.append("-" + removed.map(String.init).joined(separator: ",")) }
        return "perimeter: worker \(id) owns \(now.count) partition\(now.count == 1 ? "" : "s"): "
            + (now.isEmpty ? "none" : now.map(String.init).joined(separator: ",")) + " (" + change.joined(separator: " ") + ")"
    }

    /// The wall-clock time of day in UTC with milliseconds, `17:04:05.123` (trace lines).
    static func clockTime(_ date: Date = Date()) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 86_400_000
        let (hours, minutes) = (milliseconds / 3_600_000, milliseconds / 60_000 % 60)
        let (seconds, rest) = (milliseconds / 1000 % 60, milliseconds % 1000)
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(hours)):\(two(minutes)):\(two(seconds)).\(rest < 10 ? "00" : rest < 100 ? "0" : "")\(rest)"
    }

    private static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        return seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
    }
}
