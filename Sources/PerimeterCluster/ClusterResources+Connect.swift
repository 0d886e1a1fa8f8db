import Foundation
import PerimeterNATS

extension ClusterLayout {
    /// Whether `prefix` can name a cluster: one plain subject token (ASCII letters, digits, `-`, `_`).
    public static func isValidPrefix(_ prefix: String) -> Bool {
        !prefix.isEmpty && SubjectToken.decode(prefix) == prefix
    }
}

extension ClusterResources {
    /// Connects to the NATS servers at `urls` (any of them; the client reconnects to the others) as
    /// `name`, then creates or opens the cluster's streams and buckets
    /// (``open(on:layout:replicas:leaseDuration:retention:updatingRetention:)``). The connection lives as
    /// long as the resources' ``jetStream``.
    ///
    /// A failure that may pass (``PerimeterNATS/NATSError/isTemporary``: no server up yet, a cluster still
    /// electing its leaders) is tried again every second until `patience` has passed since the first
    /// attempt, each failed attempt told to `retrying` first; processes started together with their NATS
    /// servers (a compose file, a test) then wait for them instead of failing. Other failures, and the
    /// last temporary one, are thrown at once.
    /// - Throws: ``PerimeterNATS/NATSError`` naming what failed: the connection, or a stream or bucket.
    public static func connect(urls: [String], name: String, layout: ClusterLayout, replicas: Int,
                               leaseDuration: Duration, retention: ClusterRetention = .defaults,
                               updatingRetention: Bool = false, patience: Duration = .zero,
                               retrying: (NATSError) -> Void = { _ in }) throws(NATSError) -> ClusterResources {
        let giveUp = ContinuousClock.now + patience
        while true {
            do throws(NATSError) {
                let connection = try NATSConnection(urls: urls, name: name)
                let jetStream = try JetStream(connection)
                return try open(on: jetStream, layout: layout, replicas: replicas, leaseDuration: leaseDuration,
                                retention: retention, updatingRetention: updatingRetention)
            } catch where error.isTemporary && ContinuousClock.now + .seconds(1) < giveUp {
                retrying(error)
                sleep(1)
            }
        }
    }
}
