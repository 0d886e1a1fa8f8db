import Foundation
import PerimeterNATS

/// What a live worker announces: its id and the most partitions it will hold.
public struct WorkerPresence: Codable, Sendable, Equatable {
    /// The worker's id (the value of the lease keys it holds).
    public var id: String
    /// The most partitions it holds (``ClusterWorker/Configuration/maxPartitions``).
    public var maxPartitions: Int

    /// A presence.
    public init(id: String, maxPartitions: Int) {
        self.id = id
        self.maxPartitions = maxPartitions
    }
}

/// The live workers of a cluster: each worker keeps a presence key `worker-<token of its id>` in the
/// leases bucket, so the key expires with the bucket's TTL (the lease time) when the worker stops
/// writing it — a crashed worker leaves the membership at about the time its leases expire
/// (docs/cluster.md, "Leases").
public final class WorkerMembership: @unchecked Sendable {
    /// This worker's presence.
    public let presence: WorkerPresence
    private let bucket: KeyValueBucket
    private let key: String

    /// The key prefix of presence keys (partition leases are `partition-<p>`).
    public static let keyPrefix = "worker-"

    /// The presence key of worker `id` (its id encoded like a device id: a valid key for any id).
    public static func key(of id: String) -> String { keyPrefix + SubjectToken.encode(id) }

    /// The membership as seen by the worker `presence`, through the leases bucket.
    public init(bucket: KeyValueBucket, presence: WorkerPresence) {
        self.bucket = bucket
        self.presence = presence
        key = WorkerMembership.key(of: presence.id)
    }

    /// Writes this worker's presence key (again), restarting its time to live.
    public func announce() throws(NATSError) {
        let value = (try? JSONEncoder().encode(presence)).map(Array.init) ?? []
        try bucket.put(key, value)
    }

    /// Announces this worker and reads every live worker's presence, this one included, sorted by id.
    /// A presence key that does not hold a presence (written by something else) is skipped.
    ///
    /// The keys are listed from the bucket stream's subjects (``PerimeterNATS/KeyValueBucket/storedKeys(matching:)``),
    /// not through a consumer: creating one fails for as long as a NATS server of the cluster is dead
    /// whenever the server places it there (docs/cluster.md, "Recovery after a NATS server dies"), and
    /// a worker that cannot read the membership cannot hand partitions over.
    public func members() throws(NATSError) -> [WorkerPresence] {
        try announce()
        var members = [presence]
        for key in try bucket.storedKeys() where key.hasPrefix(WorkerMembership.keyPrefix) && key != self.key {
            // A key can expire between the listing and the read: then it is simply not a member.
            guard let entry = try bucket.get(key), !entry.value.isEmpty,
                  let member = try? JSONDecoder().decode(WorkerPresence.self, from: Data(entry.value)) else { continue }
            members.append(member)
        }
        return members.sorted { $0.id < $1.id }
    }

    /// Removes this worker's presence key at once (a graceful stop): the others rebalance without
    /// waiting for it to expire.
    public func leave() throws(NATSError) {
        try bucket.delete(key)
    }
}

/// The assignment of partitions to live workers that every worker computes alike from the same
/// membership: rendezvous hashing (each partition ranks the workers by a hash of partition and worker
/// id) with bounded load — a partition goes to the first worker in its ranking that holds fewer than
/// its fair share, ⌈P / workers⌉, and fewer than its own maximum. Partitions left over when every
/// share is full go to the first worker in their ranking below its maximum; with too little capacity in
/// all, some stay unassigned.
///
/// When a worker joins or leaves, only the partitions whose ranking it changes move, up to the
/// adjustments the bound makes.
public enum PartitionAssignment {
    /// The owner each partition should have: partition → worker id (missing: nobody has room).
    public static func assign(partitions: Int, workers: [WorkerPresence]) -> [Int: String] {
        var unique: [String: WorkerPresence] = [:]
        for worker in workers where worker.maxPartitions > 0 { unique[worker.id] = worker }
        let members = unique.values.sorted { $0.id < $1.id }
        guard !members.isEmpty, partitions > 0 else { return [:] }
        let fair = (partitions + members.count - 1) / members.count
        var held: [String: Int] = [:]
        var assignment: [Int: String] = [:]
        var leftOver: [Int] = []
        var rankings: [Int: [WorkerPresence]] = [:]
        for partition in 0..<partitions {
            let ranking = members.sorted { (score(partition, $0.id), $0.id) > (score(partition, $1.id), $1.id) }
            rankings[partition] = ranking
            if let worker = ranking.first(where: { held[$0.id, default: 0] < min(fair, $0.maxPartitions) }) {
                assignment[partition] = worker.id
                held[worker.id, default: 0] += 1
            } else {
                leftOver.append(partition)
            }
        }
        for partition in leftOver {
            if let worker = rankings[partition]!.first(where: { held[$0.id, default: 0] < $0.maxPartitions }) {
                assignment[partition] = worker.id
                held[worker.id, default: 0] += 1
            }
        }
        return assignment
    }

    /// The rank of `worker` for `partition`: FNV-1a-64 of the id, mixed with the partition by the
    /// SplitMix64 finalizer. Fixed here (not Swift's seeded `Hasher`) so that every process agrees.
    public static func score(_ partition: Int, _ worker: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in worker.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        var z = hash ^ (UInt64(truncatingIfNeeded: partition) &* 0x9e37_79b9_7f4a_7c15)
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
