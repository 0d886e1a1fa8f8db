import Foundation
import PerimeterNATS
import Synchronization

/// The lease that makes one worker the only owner of one partition: the key `partition-<p>` of the
/// leases bucket, whose revision is the owner's fencing token (docs/cluster.md, "Leases").
///
/// - ``acquire(in:partition:owner:duration:)`` takes a free partition with a create-only write (or a
///   compare-and-set over a released lease); it answers `nil` when another worker holds it.
/// - ``renew()`` rewrites the key with compare-and-set on the revision held. When someone else's write
///   is there — the key expired (the bucket's TTL is the lease time) and another worker took it — the
///   lease is lost for good.
/// - ``isValid`` is what a worker checks before each batch it processes and publishes: held, and the last
///   successful write is younger than the lease time less a safety margin. A worker that cannot reach
///   the cluster therefore stops on its own before the key can expire and another worker can take over.
///
/// Thread-safe: the worker's loop checks ``isValid`` while a timer renews (``LeaseRenewer``). Writes —
/// renewals and the release — are serialized, so two threads renewing at once cannot refuse each other's
/// revision and lose the lease by mistake.
public final class PartitionLease: @unchecked Sendable {
    /// The partition.
    public let partition: Int
    /// Who holds it (the worker's id, the key's value).
    public let owner: String
    /// The lease time: the bucket's TTL.
    public let duration: Duration
    private let bucket: KeyValueBucket
    private let state: Mutex<State>
    /// Held across each write of the key (a network round trip), so writes go one at a time.
    private let writing = NSLock()

    private struct State {
        var revision: UInt64
        var writtenAt: ContinuousClock.Instant
        var validUntil: ContinuousClock.Instant
        var lost: Bool
    }

    /// The key of `partition`'s lease.
    public static func key(_ partition: Int) -> String { "partition-\(partition)" }

    /// The part of the lease time a holder gives up to clock-rate differences and the time a write
    /// takes to be stored: it stops trusting its lease after `duration × (1 − margin)`.
    public static let safetyMargin = 0.25

    /// The bucket configuration for leases of `duration` on a cluster with `replicas` copies.
    public static func bucketConfiguration(name: String = "perimeter-leases", duration: Duration, replicas: Int = 1) -> KeyValueConfiguration {
        KeyValueConfiguration(bucket: name, history: 1, ttl: duration, replicas: replicas)
    }

    private init(bucket: KeyValueBucket, partition: Int, owner: String, duration: Duration, revision: UInt64,
                 sentAt: ContinuousClock.Instant) {
        self.bucket = bucket
        self.partition = partition
        self.owner = owner
        self.duration = duration
        state = Mutex(State(revision: revision, writtenAt: sentAt, validUntil: sentAt + duration * (1 - PartitionLease.safetyMargin),
                            lost: false))
    }

    /// Takes `partition` for `owner` if nobody holds it.
    /// - Parameter duration: the lease time; must equal the bucket's TTL.
    /// - Returns: the lease, or `nil` when another worker holds the partition.
    /// - Throws: ``NATSError`` when the cluster does not answer.
    public static func acquire(in bucket: KeyValueBucket, partition: Int, owner: String, duration: Duration) throws(NATSError) -> PartitionLease? {
        let key = PartitionLease.key(partition)
        let sentAt = ContinuousClock.now
        do {
            let revision = try bucket.create(key, Array(owner.utf8))
            return PartitionLease(bucket: bucket, partition: partition, owner: owner, duration: duration, revision: revision, sentAt: sentAt)
        } catch where error.reason == .wrongLastSequence {
            // Held, or released (an empty value written by its last owner): a released lease is taken
            // with compare-and-set on the release's revision, so two workers cannot both take it.
            guard let entry = try bucket.get(key), entry.value.isEmpty else { return nil }
            do {
                let revision = try bucket.update(key, Array(owner.utf8), expectedRevision: entry.revision)
                return PartitionLease(bucket: bucket, partition: partition, owner: owner, duration: duration, revision: revision, sentAt: sentAt)
            } catch where error.reason == .wrongLastSequence {
                return nil
            }
        }
    }

    /// The fencing token: the revision of the lease's last write by this holder.
    public var revision: UInt64 { state.withLock { $0.revision } }

    /// Whether the holder may still process and publish for the partition: not lost, and the last
    /// successful write is recent enough that the key cannot have expired.
    public var isValid: Bool {
        state.withLock { !$0.lost && ContinuousClock.now < $0.validUntil }
    }

    /// Whether the lease is lost for good (someone else's revision, or released).
    public var isLost: Bool { state.withLock { $0.lost } }

    /// Whether the lease is neither lost nor valid: its renewals went unanswered (the leases bucket's
    /// stream had no leader, say) until its validity ran out. Its holder processes nothing, and a
    /// renewal decides: it succeeds only if nobody wrote the key since the revision held — then nobody
    /// else can have held the partition in between, and the holder goes on where it stopped — and
    /// otherwise the lease is lost.
    public var isLapsed: Bool {
        state.withLock { !$0.lost && ContinuousClock.now >= $0.validUntil }
    }

    /// Rewrites the lease at the revision held, extending it by ``duration`` from now; a lapsed lease
    /// (``isLapsed``) is tried too — the compare-and-set is what tells whether it is still ours.
    /// - Returns: whether the lease is still held. `false` is final: another write came first (the key
    ///   expired and was taken or deleted by the bucket's TTL, or was released).
    /// - Throws: ``NATSError`` when the cluster did not answer; the lease stays held until
    ///   ``isValid`` turns false, and a later renewal may still succeed.
    @discardableResult
    public func renew() throws(NATSError) -> Bool {
        writing.lock()
        defer { writing.unlock() }
        let (revision, lost) = state.withLock { ($0.revision, $0.lost) }
        guard !lost else { return false }
        let sentAt = ContinuousClock.now
        do {
            let next = try bucket.update(PartitionLease.key(partition), Array(owner.utf8), expectedRevision: revision)
            state.withLock {
                $0.revision = next
                $0.writtenAt = sentAt
                $0.validUntil = sentAt + duration * (1 - PartitionLease.safetyMargin)
            }
            return true
        } catch where error.reason == .wrongLastSequence {
            state.withLock { $0.lost = true }
            return false
        }
    }

    /// Renews when a third of the lease time has passed since the last successful write (so a
    /// holder has two more chances before it stops trusting the lease); otherwise only answers whether
    /// it is still valid.
    /// - Returns: whether the lease is still held and valid.
    /// - Throws: ``NATSError`` when the cluster did not answer (see ``renew()``).
    @discardableResult
    public func renewIfDue() throws(NATSError) -> Bool {
        let due = state.withLock { ContinuousClock.now - $0.writtenAt >= duration / 3 }
        if due { return try renew() && isValid }
        return isValid
    }

    /// Gives the partition up at once (an empty value at the revision held, so a stale holder cannot
    /// release someone else's lease); the lease is lost afterwards. Quietly does nothing when the lease
    /// was lost already.
    public func release() throws(NATSError) {
        writing.lock()
        defer { writing.unlock() }
        let (revision, lost) = state.withLock { ($0.revision, $0.lost) }
        state.withLock { $0.lost = true }
        guard !lost else { return }
        do {
            try bucket.update(PartitionLease.key(partition), [], expectedRevision: revision)
        } catch where error.reason == .wrongLastSequence {
            return
        }
    }
}
