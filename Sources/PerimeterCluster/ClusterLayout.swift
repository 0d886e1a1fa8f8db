import PerimeterEngine
import PerimeterNATS

/// Where a cluster keeps things in JetStream: stream and subject names, per partition
/// (docs/cluster.md, "The picture").
///
/// - input: stream `<prefix>_INPUT`, subjects `<prefix>.in.<p>.<device token>` for updates and
///   `<prefix>.in.<p>.=tick` for the owner's clock (no device id encodes to `=tick`);
/// - events: stream `<prefix>_EVENTS`, subject `<prefix>.events.<p>`.
public struct ClusterLayout: Sendable, Equatable {
    /// The subject prefix (one token, e.g. `perimeter`); stream names use it upper-cased.
    public let prefix: String
    /// How devices map to partitions.
    public let partitioning: DevicePartitioning

    /// A layout under `prefix` (one subject token of letters, digits, `-` and `_`).
    public init(prefix: String = "perimeter", partitioning: DevicePartitioning = DevicePartitioning()!) {
        precondition(SubjectToken.decode(prefix) == prefix && !prefix.isEmpty, "a prefix is one plain subject token")
        self.prefix = prefix
        self.partitioning = partitioning
    }

    /// The input stream's name.
    public var inputStream: String { "\(prefix.uppercased())_INPUT" }
    /// The events stream's name.
    public var eventStream: String { "\(prefix.uppercased())_EVENTS" }
    /// The token of tick records (not the encoding of any device id).
    public static let tickToken = "=tick"

    /// The subject an update of `device` is published to.
    public func inputSubject(of device: DeviceID) -> String {
        "\(prefix).in.\(partitioning.partition(of: device)).\(partitioning.token(of: device))"
    }

    /// The subject of `partition`'s clock ticks.
    public func tickSubject(_ partition: Int) -> String { "\(prefix).in.\(partition).\(ClusterLayout.tickToken)" }

    /// Everything of `partition`'s input.
    public func inputFilter(_ partition: Int) -> String { "\(prefix).in.\(partition).*" }

    /// The subject of `partition`'s events.
    public func eventSubject(_ partition: Int) -> String { "\(prefix).events.\(partition)" }

    /// The input stream, keeping what `limits` allow. Its duplicate window is at most the maximum age
    /// (JetStream refuses a longer one).
    public func inputStreamConfiguration(replicas: Int = 1, duplicateWindow: Duration = .seconds(120),
                                         limits: ClusterRetention.Limits = ClusterRetention.defaults.input) -> StreamConfiguration {
        ClusterLayout.limited(StreamConfiguration(name: inputStream, subjects: ["\(prefix).in.*.*"], replicas: replicas,
                                                  duplicateWindow: duplicateWindow), by: limits)
    }

    /// The events stream, keeping what `limits` allow. Its duplicate window bounds how late a takeover
    /// may republish an event and still have it dropped (docs/cluster.md, "The guarantees"); it is at
    /// most the maximum age.
    public func eventStreamConfiguration(replicas: Int = 1, duplicateWindow: Duration = .seconds(120),
                                         limits: ClusterRetention.Limits = ClusterRetention.defaults.events) -> StreamConfiguration {
        ClusterLayout.limited(StreamConfiguration(name: eventStream, subjects: ["\(prefix).events.*"], replicas: replicas,
                                                  duplicateWindow: duplicateWindow), by: limits)
    }

    private static func limited(_ stream: StreamConfiguration, by limits: ClusterRetention.Limits) -> StreamConfiguration {
        var stream = stream
        stream.maxAge = limits.maxAge
        stream.maxBytes = limits.maxBytes
        stream.maxMessages = limits.maxMessages
        if let maxAge = limits.maxAge { stream.duplicateWindow = min(stream.duplicateWindow, maxAge) }
        return stream
    }
}
