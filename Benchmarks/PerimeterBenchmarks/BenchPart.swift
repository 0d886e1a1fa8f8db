import Foundation

/// One part of the benchmark run, as `perimeter-bench --only` names it.
public enum BenchPart: String, CaseIterable, Sendable {
    /// The bare engine (`EngineBench`): the CPU yardstick and the answers the others are checked against.
    case engine
    /// The peers named by `--peers` (refgrid, Shapely, PostGIS); needs `engine`'s answers.
    case peers
    /// `GeofencingService` with both stores (`ServiceBench`); needs `engine`'s figure and counts.
    case service
    /// `perimeter serve` over loopback HTTP (`HTTPBench`).
    case http
    /// Server-sent event fan-out (`FanoutBench`).
    case fanout
    /// Webhook deliveries over http and https (`WebhookBench`).
    case webhooks
    /// Bulk fence loading (`LoadBench`).
    case load
    /// Fence import through the server's path, stage by stage and over HTTP (`ImportBench`).
    case `import`
    /// The scaling curves (`ScalingBench`).
    case scaling
    /// Batch throughput with 1 … N engine shards (`ShardBench`); needs unpinned cores.
    case shards
    /// The cluster on NATS JetStream (`ClusterBench`): updates/s with 1 and 2 workers, latency, failover.
    case cluster

    /// Whether this part needs `engine` to run first in the same run.
    public var needsEngine: Bool { self == .peers || self == .service }

    /// Parses a comma-separated list such as `http,fanout`; adds `engine` when a chosen part needs it.
    /// - Throws: a message naming the unknown part and listing the valid ones, or saying the list is empty.
    public static func parseList(_ text: String) throws(BenchOptions.UsageError) -> Set<BenchPart> {
        let names = text.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        var parts = Set<BenchPart>()
        for name in names {
            guard let part = BenchPart(rawValue: name.lowercased()) else {
                let valid = allCases.map(\.rawValue).joined(separator: ", ")
                throw BenchOptions.UsageError(description: name.isEmpty
                    ? "--only: empty part name in \"\(text)\"; valid parts: \(valid)"
                    : "--only: unknown part \"\(name)\"; valid parts: \(valid)")
            }
            parts.insert(part)
        }
        if parts.contains(where: \.needsEngine) { parts.insert(.engine) }
        return parts
    }
}
