import PerimeterNATS

/// How much of its history each growing stream of a cluster keeps (docs/cluster.md, "Retention").
///
/// The input stream and the events stream grow with every update and every event; the buckets do not
/// (one revision per key, keys bounded by partitions, workers and fences). Every process of a cluster
/// opens the streams with the same limits (`--input-max-age`, `--input-max-bytes`, `--events-max-age`,
/// `--events-max-bytes` of `perimeter worker` and `perimeter serve --nats`); a process given limits
/// other than the streams' is refused, naming the flag and both values
/// (``ClusterResources/open(on:layout:replicas:leaseDuration:retention:updatingRetention:)``).
public struct ClusterRetention: Sendable, Equatable {
    /// The limits of one stream: the oldest messages are removed once any is exceeded.
    public struct Limits: Sendable, Equatable {
        /// How long a message is kept; `nil`: no age limit.
        public var maxAge: Duration?
        /// The most bytes kept; `nil`: no byte limit.
        public var maxBytes: Int64?
        /// The most messages kept; `nil`: no count limit (no flag sets it; tests use it to age input
        /// out without waiting).
        public var maxMessages: Int64?

        /// Limits with these parts (all optional).
        public init(maxAge: Duration? = nil, maxBytes: Int64? = nil, maxMessages: Int64? = nil) {
            self.maxAge = maxAge
            self.maxBytes = maxBytes
            self.maxMessages = maxMessages
        }
    }

    /// The input stream's limits: it must keep every partition's input after its latest snapshot.
    public var input: Limits
    /// The events stream's limits: API nodes rebuild their event log from what it keeps.
    public var events: Limits

    /// The defaults: both streams keep a day, with no byte limit. A partition that has an owner snapshots
    /// at least every 10,000 of its records, and its clock ticks 4 times a second, so at most about 42
    /// minutes pass between its snapshots; a day leaves a cluster whose workers were all down (or stuck)
    /// for most of a day able to resume without losing input. A byte limit would remove input whether or
    /// not a snapshot covers it, so it is off by default: a full disk refuses writes (the API node
    /// answers 503) instead of losing acknowledged updates. A day of events bounds what each API node
    /// reads back into memory at its start.
    public static let defaults = ClusterRetention(input: Limits(maxAge: .seconds(86_400)), events: Limits(maxAge: .seconds(86_400)))

    /// Retention with these limits.
    public init(input: Limits, events: Limits) {
        self.input = input
        self.events = events
    }

    /// The flag that sets each limit, for refusals.
    static func flag(events: Bool, _ limit: String) -> String { "--\(events ? "events" : "input")-\(limit)" }

    /// `86400 s` as `24h`, `90 s` as `90s`, `nil` as `none`.
    static func describe(_ age: Duration?) -> String {
        guard let age else { return "none" }
        let nanoseconds = age.components.seconds * 1_000_000_000 + age.components.attoseconds / 1_000_000_000
        let seconds = Double(nanoseconds) / 1e9
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds) / 3600)h" }
        if seconds == seconds.rounded() { return "\(Int(seconds))s" }
        return "\(seconds)s"
    }

    /// A byte or message count, or `none`.
    static func describe(_ count: Int64?) -> String { count.map(String.init) ?? "none" }

    /// The differences between the `existing` stream's limits and `wanted`, each naming its flag and
    /// both values.
    static func differences(existing: StreamConfiguration, wanted: StreamConfiguration, events: Bool) -> [String] {
        var differences: [String] = []
        if existing.maxAge != wanted.maxAge {
            differences.append("\(flag(events: events, "max-age")) \(describe(wanted.maxAge)) (the stream keeps \(describe(existing.maxAge)))")
        }
        if existing.maxBytes != wanted.maxBytes {
            differences.append("\(flag(events: events, "max-bytes")) \(describe(wanted.maxBytes)) (the stream keeps \(describe(existing.maxBytes)))")
        }
        if existing.maxMessages != wanted.maxMessages {
            differences.append("max messages \(describe(wanted.maxMessages)) (the stream keeps \(describe(existing.maxMessages)))")
        }
        return differences
    }
}
