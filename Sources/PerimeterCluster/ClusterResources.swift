import PerimeterNATS

/// Everything one cluster keeps in JetStream, created when missing and opened when present: the input
/// and events streams of its ``ClusterLayout``, and the leases, snapshots, fences and consent buckets
/// named after the layout's prefix (docs/cluster.md, "The picture").
///
/// Every process of a cluster — workers and API nodes — calls
/// ``open(on:layout:replicas:leaseDuration:retention:updatingRetention:)`` with the same values at start.
/// JetStream answers an identical configuration with the existing stream or bucket, so the order in
/// which processes start does not matter; a different configuration (another lease time, another
/// replica count) is refused with the server's error, which names the stream, and other retention
/// limits with an error naming the flag and both values (docs/cluster.md, "Retention").
public struct ClusterResources: Sendable {
    /// The connection's JetStream context.
    public let jetStream: JetStream
    /// Stream and subject names, and the partitioning.
    public let layout: ClusterLayout
    /// The partition leases (TTL = the lease time).
    public let leases: KeyValueBucket
    /// Each partition's latest snapshot.
    public let snapshots: SnapshotStore
    /// The fences, one key per fence (``FenceFeed/key(of:)``), applied by every worker in revision order.
    public let fences: KeyValueBucket
    /// User consent, service-wide and per device (``ConsentRecord``), shared by every API node.
    public let consent: KeyValueBucket
    /// The lease time the leases bucket was opened with.
    public let leaseDuration: Duration

    /// The leases bucket's name for `layout`.
    public static func leasesBucket(_ layout: ClusterLayout) -> String { "\(layout.prefix)-leases" }
    /// The snapshots bucket's name for `layout`.
    public static func snapshotsBucket(_ layout: ClusterLayout) -> String { "\(layout.prefix)-snapshots" }
    /// The fences bucket's name for `layout`.
    public static func fencesBucket(_ layout: ClusterLayout) -> String { "\(layout.prefix)-fences" }
    /// The consent bucket's name for `layout`.
    public static func consentBucket(_ layout: ClusterLayout) -> String { "\(layout.prefix)-consent" }

    /// The JetStream code of a stream created before with another configuration (`JSStreamNameExistErr`).
    static let differentConfigurationCode = 10058

    /// Creates or opens the cluster's streams and buckets.
    /// - Parameters:
    ///   - replicas: copies of every stream and bucket (3 on a 3-server cluster, 1 on one server).
    ///   - leaseDuration: the lease time; every process of the cluster must use the same.
    ///   - retention: the limits of the growing streams; every process of the cluster must use the same.
    ///   - updatingRetention: when the streams exist with other limits, change them to `retention`
    ///     instead of refusing (the operator's deliberate change: `--update-retention`).
    /// - Throws: ``PerimeterNATS/NATSError`` when the cluster does not answer or holds a different
    ///   configuration under one of the names; for other retention limits (without
    ///   `updatingRetention`), its text names each differing flag with both values.
    public static func open(on jetStream: JetStream, layout: ClusterLayout = ClusterLayout(), replicas: Int = 1,
                            leaseDuration: Duration = .seconds(10), retention: ClusterRetention = .defaults,
                            updatingRetention: Bool = false) throws(NATSError) -> ClusterResources {
        try openStream(layout.inputStreamConfiguration(replicas: replicas, limits: retention.input), events: false,
                       on: jetStream, updating: updatingRetention)
        try openStream(layout.eventStreamConfiguration(replicas: replicas, limits: retention.events), events: true,
                       on: jetStream, updating: updatingRetention)
        let leases = try jetStream.createKeyValue(
            PartitionLease.bucketConfiguration(name: leasesBucket(layout), duration: leaseDuration, replicas: replicas))
        let snapshots = try jetStream.createKeyValue(
            SnapshotStore.bucketConfiguration(name: snapshotsBucket(layout), replicas: replicas))
        // One revision per key is enough: a feed reads every key's latest value from the revision it saw.
        let fences = try jetStream.createKeyValue(KeyValueConfiguration(bucket: fencesBucket(layout), history: 1, replicas: replicas))
        // Only the latest consent counts: an API node applies each key's latest value at start.
        let consent = try jetStream.createKeyValue(KeyValueConfiguration(bucket: consentBucket(layout), history: 1, replicas: replicas))
        return ClusterResources(jetStream: jetStream, layout: layout, leases: leases, snapshots: SnapshotStore(bucket: snapshots),
                                fences: fences, consent: consent, leaseDuration: leaseDuration)
    }

    /// Creates `wanted`, or opens it when it exists alike; when it exists with other retention limits,
    /// refuses naming the flags (or, `updating`, changes the stream's limits to the wanted ones).
    private static func openStream(_ wanted: StreamConfiguration, events: Bool, on jetStream: JetStream,
                                   updating: Bool) throws(NATSError) {
        do {
            try jetStream.addStream(wanted)
            return
        } catch where error.jetStreamCode == differentConfigurationCode {
            let existing = try jetStream.streamConfiguration(wanted.name)
            let differences = ClusterRetention.differences(existing: existing, wanted: wanted, events: events)
            if differences.isEmpty { throw error }   // another difference (replicas): the server's words
            guard updating else {
                throw NATSError(operation: "open stream \(wanted.name)", status: error.status, statusText: error.statusText,
                                jetStreamCode: error.jetStreamCode,
                                text: "this process was given " + differences.joined(separator: ", ")
                                    + "; every process of a cluster must be given the same retention flags"
                                    + " (--update-retention changes the stream's; docs/cluster.md, \"Retention\")")
            }
            var updated = existing
            updated.maxAge = wanted.maxAge
            updated.maxBytes = wanted.maxBytes
            updated.maxMessages = wanted.maxMessages
            updated.duplicateWindow = wanted.duplicateWindow
            try jetStream.updateStream(updated)
            // Anything else that differs is refused here in the server's words.
            try jetStream.addStream(wanted)
        }
    }
}
