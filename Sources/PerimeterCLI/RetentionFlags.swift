import PerimeterCluster

/// The retention flags every process of a cluster takes alike (`perimeter worker`, `perimeter serve
/// --nats`; docs/cluster.md, "Retention").
enum RetentionFlags {
    static let help = """
      --input-max-age AGE    How long the input stream keeps updates and ticks (default 24h; e.g. 90m, 36h,
                             7d; 'none' for no limit). Must exceed the time between a partition's snapshots.
      --input-max-bytes SIZE The most the input stream holds, per replica (default none; e.g. 500M, 20G).
      --events-max-age AGE   How long the events stream keeps events (default 24h): what an API node reads
                             back at its start and what webhooks and SSE clients can catch up on.
      --events-max-bytes SIZE
                             The most the events stream holds, per replica (default none).
    """

    /// The four flags, removed from `args`; the defaults (``ClusterRetention/defaults``) for those absent.
    static func parse(_ args: inout Arguments, command: String) throws -> ClusterRetention {
        var retention = ClusterRetention.defaults
        if let text = try args.option("input-max-age") { retention.input.maxAge = try age(text, flag: "input-max-age", command: command) }
        if let text = try args.option("input-max-bytes") { retention.input.maxBytes = try size(text, flag: "input-max-bytes", command: command) }
        if let text = try args.option("events-max-age") { retention.events.maxAge = try age(text, flag: "events-max-age", command: command) }
        if let text = try args.option("events-max-bytes") {
            retention.events.maxBytes = try size(text, flag: "events-max-bytes", command: command)
        }
        return retention
    }

    /// `90s`, `15m`, `24h`, `7d` (or a number of seconds); `none` or `0` for no limit.
    static func age(_ text: String, flag: String, command: String) throws -> Duration? {
        if text == "none" || text == "0" { return nil }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        var number = Substring(text), unit = 1.0
        if let last = text.last, let scale = units[last] {
            number = text.dropLast()
            unit = scale
        }
        guard let value = Double(number), value.isFinite, value > 0, value * unit >= 1, value * unit <= 3650 * 86_400 else {
            throw CommandLineError.usage("\(command): --\(flag) must be an age like 90s, 15m, 24h or 7d (at least 1 s, at most 3650d), or 'none', not '\(text)'")
        }
        return .milliseconds(Int64((value * unit * 1000).rounded()))
    }

    /// `500000`, `64K`, `500M`, `20G`, `1T` (binary multiples); `none` or `0` for no limit.
    static func size(_ text: String, flag: String, command: String) throws -> Int64? {
        if text == "none" || text == "0" { return nil }
        let units: [Character: Double] = ["K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024, "T": 1024 * 1024 * 1024 * 1024]
        var number = Substring(text), unit = 1.0
        if let last = text.uppercased().last, let scale = units[last] {
            number = text.dropLast()
            unit = scale
        }
        guard let value = Double(number), value.isFinite, value * unit >= 1024, value * unit <= 1e18 else {
            throw CommandLineError.usage("\(command): --\(flag) must be a size like 500M or 20G (at least 1K), or 'none', not '\(text)'")
        }
        return Int64((value * unit).rounded())
    }
}
