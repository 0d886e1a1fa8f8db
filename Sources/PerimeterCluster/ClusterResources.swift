import PerimeterNATS

/// Everything one cluster keeps in JetStream, created when missing and opened when present: the input
/// and events streams of its ``ClusterLayout``, and the leases, snapshots and fences buckets named after
/// the layout's prefix (docs/cluster.md, "The picture").
///
/// Every process of a cluster — workers and API nodes — calls ``open(on:layout:replicas:leaseDuration:)``
/// with the same values at start. JetStream answers an identical configuration with the existing stream
/// or bucket, so the order in which processes start does not matter; a different configuration (another
/// lease time, another replica count) is refused with the server's error, which names the stream.
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
    /// The lease time the leases bucket was opened with.
    public let leaseDuration: Duration

    /// The leases bucket's name for `layout`.
    public static func leasesBucket(_ layout: ClusterLayout) -> String { "\(layout.prefix)-leases" }
    /// The snapshots bucket's name for `layout`.
    public static func snapshotsBucket(_ layout: ClusterLayout) -> String { "\(layout.prefix)-snapshots" }
    /// The fences bucket's name for `layout`.
    public static func fencesBucket(_ layout: ClusterLayout) -> String { "\(layout.prefix)-fences" }

    /// Creates or opens the cluster's streams and buckets.
    /// - Parameters:
    ///   - replicas: copies of every stream and bucket (3 on a 3-server cluster, 1 on one server).
    ///   - leaseDuration: the lease time; every process of the cluster must use the same.
    /// - Throws: ``PerimeterNATS/NATSError`` when the cluster does not answer or holds a different
    ///   configuration under one of the names.
    public static func open(on jetStream: JetStream, layout: ClusterLayout = ClusterLayout(), replicas: Int = 1,
                            leaseDuration: Duration = .seconds(10)) throws(NATSError) -> ClusterResources {
        try jetStream.addStream(layout.inputStreamConfiguration(replicas: replicas))
        try jetStream.addStream(layout.eventStreamConfiguration(replicas: replicas))
        let leases = try jetStream.createKeyValue(
            PartitionLease.bucketConfiguration(name: leasesBucket(layout), duration: leaseDuration, replicas: replicas))
        let snapshots = try jetStream.createKeyValue(
            SnapshotStore.bucketConfiguration(name: snapshotsBucket(layout), replicas: replicas))
        // One revision per key is enough: a feed reads every key's latest value from the revision it saw.
        let fences = try jetStream.createKeyValue(KeyValueConfiguration(bucket: fencesBucket(layout), history: 1, replicas: replicas))
        return ClusterResources(jetStream: jetStream, layout: layout, leases: leases, snapshots: SnapshotStore(bucket: snapshots),
                                fences: fences, leaseDuration: leaseDuration)
    }
}
