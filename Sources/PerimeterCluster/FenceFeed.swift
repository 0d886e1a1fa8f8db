import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterNATS

/// The fences bucket read in revision order: one key per fence (the fence id as a
/// ``PerimeterNATS/SubjectToken``), whose value is the fence's GeoJSON feature; a deleted key is a
/// removed fence (docs/cluster.md, "Fences").
///
/// A worker does not apply a change when it arrives: the partition owner's next tick records the
/// revision the feed has received (``receivedRevision``), and every worker that reads that tick — the
/// owner, or a new owner replaying — applies the changes up to it (``take(through:timeout:)``), so each
/// change takes effect at the same point of the input.
///
/// The feed reads through an ephemeral consumer, which lives on one server of the cluster. When a
/// fetch fails (its server died), or nothing arrived for ``idleReopenInterval`` (a dead consumer and a
/// quiet bucket look alike), a new consumer from the next revision is created off the caller's thread
/// (``PendingConsumer``); until it is there the feed receives nothing, so ticks record an older revision
/// — which every replay applies alike. Use from one thread at a time.
public final class FenceFeed: @unchecked Sendable {
    /// One change of the fence set.
    public enum Change: Sendable {
        /// Add the fence, or replace the one with its id.
        case upsert(Fence)
        /// Remove the fence with this id.
        case remove(FenceID)
        /// The value under this key is not a fence (the problems say why); the fence is removed, as a
        /// fence that does not load is not watched.
        case invalid(FenceID, String)
    }

    /// The bucket read.
    public let bucket: KeyValueBucket
    /// The highest revision received so far (0: none).
    public private(set) var receivedRevision: UInt64 = 0
    /// After this long without a change, the feed's consumer is opened anew.
    public let idleReopenInterval: Duration
    /// Consumers opened anew so far.
    public private(set) var reopens = 0
    private var changes: KeyValueChanges
    private var reopening: PendingConsumer<KeyValueChanges>?
    private var nextRevision: UInt64
    private var quietSince = ContinuousClock.now
    private var pending: [(revision: UInt64, change: Change)] = []
    private let loader: FenceLoader
    private let trace: (@Sendable (String) -> Void)?

    /// The key of fence `id`.
    public static func key(of id: FenceID) -> String { SubjectToken.encode(id.rawValue) }

    /// Reads every revision from `revision` on (1: all the bucket still has; a snapshot's fence
    /// revision + 1 after a restore), oldest first. The bucket's `history` bounds how far back a replay
    /// can rebuild the fence set. `trace` gets a line for each failed fetch and each reopen that failed
    /// or succeeded after failures.
    /// - Throws: ``PerimeterNATS/NATSError`` when the first consumer cannot be created (within twice
    ///   ``PartitionWorker/consumerCreationTimeout``, attempts overlapping).
    public init(bucket: KeyValueBucket, from revision: UInt64 = 1, loader: FenceLoader = FenceLoader(),
                idleReopenInterval: Duration = .seconds(30), trace: (@Sendable (String) -> Void)? = nil) throws(NATSError) {
        self.bucket = bucket
        self.loader = loader
        self.idleReopenInterval = idleReopenInterval
        self.trace = trace
        nextRevision = max(revision, 1)
        let from = max(revision, 1)
        changes = try PendingConsumer.create(what: "fence feed from revision \(from)", timeout: PartitionWorker.consumerCreationTimeout * 2,
                                             trace: trace,
                                             attempt: { () throws -> KeyValueChanges in
                                                 try bucket.changes(from: from, creationTimeout: PartitionWorker.consumerCreationTimeout)
                                             },
                                             close: { $0.close() })
    }

    deinit { close() }

    /// Stops reading: the consumer is closed off this thread (``PendingConsumer/closeInBackground(_:_:)``),
    /// and one being created is abandoned. Idempotent.
    public func close() {
        reopening?.cancel()
        reopening = nil
        PendingConsumer.closeInBackground(changes) { $0.close() }
    }

    /// Whether a new consumer is being created.
    public var isReopening: Bool { reopening != nil }

    /// Reads what has arrived, waiting at most `wait` for the first change (zero: only what is there
    /// now; a change written a moment ago may come with the next poll). A failed fetch is not an error
    /// here: the feed opens a new consumer and receives nothing until it is there.
    public func poll(wait: Duration = .zero) throws(NATSError) {
        if let next = reopening?.take() {
            reopening = nil
            PendingConsumer.closeInBackground(changes) { $0.close() }
            changes = next
        }
        var timeout = max(wait, .milliseconds(1))
        while true {
            let entries: [KeyValueEntry]
            do {
                entries = try changes.next(timeout: timeout)
            } catch {
                if reopening == nil { trace?("fence feed: fetch failed, reopening: \(error)") }
                reopen()
                Thread.sleep(forTimeInterval: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
                return
            }
            if entries.isEmpty {
                if ContinuousClock.now - quietSince >= idleReopenInterval { reopen() }
                return
            }
            // A reopened consumer starts at the revision after the last received when the reopen
            // began; the old one may have delivered more since.
            for entry in entries where entry.revision >= nextRevision {
                pending.append((entry.revision, change(entry)))
                receivedRevision = max(receivedRevision, entry.revision)
                nextRevision = entry.revision + 1
            }
            quietSince = .now
            timeout = .milliseconds(1)
        }
    }

    /// Starts creating a consumer from ``nextRevision`` off this thread, unless one is on its way.
    private func reopen() {
        quietSince = .now
        guard reopening == nil else { return }
        reopens += 1
        let (bucket, from) = (bucket, nextRevision)
        reopening = PendingConsumer(what: "fence feed from revision \(from)", trace: trace,
                                    attempt: { () throws -> KeyValueChanges in
                                        try bucket.changes(from: from, creationTimeout: PartitionWorker.consumerCreationTimeout)
                                    },
                                    close: { $0.close() })
    }

    /// The changes up to `revision`, in revision order, waiting (at most `timeout`) until the feed has
    /// received that revision.
    /// - Throws: ``NATSError`` with reason ``NATSError/Reason/timeout`` when it did not arrive in time.
    public func take(through revision: UInt64, timeout: Duration = .seconds(10)) throws(NATSError) -> [Change] {
        let deadline = ContinuousClock.now + timeout
        try poll()
        while receivedRevision < revision {
            let left = deadline - .now
            guard left > .zero else {
                throw NATSError.timeout("fence feed of \(bucket.name)",
                                        "revision \(revision) not received within \(timeout) (received \(receivedRevision))")
            }
            try poll(wait: min(left, .milliseconds(100)))
        }
        let count = pending.prefix { $0.revision <= revision }.count
        defer { pending.removeFirst(count) }
        return pending.prefix(count).map(\.change)
    }

    /// Applies `changes` to `engine` in order.
    public static func apply(_ changes: [Change], to engine: inout DetectionEngine) {
        for change in changes {
            switch change {
            case .upsert(let fence): engine.upsert(fence)
            case .remove(let id), .invalid(let id, _): _ = engine.remove(id: id)
            }
        }
    }

    private func change(_ entry: KeyValueEntry) -> Change {
        let id = FenceID(SubjectToken.decode(entry.key) ?? entry.key)
        guard entry.operation == .put else { return .remove(id) }
        let result = loader.load(GeoJSONReader().read(entry.value))
        guard let fence = result.fences.first, result.fences.count == 1, !result.hasErrors else {
            let problems = result.problems.map { "\($0)" }.joined(separator: "; ")
            return .invalid(id, problems.isEmpty ? "not one fence" : problems)
        }
        guard fence.id == id else { return .invalid(id, "the feature's id \(fence.id) is not its key's fence id \(id)") }
        return .upsert(fence)
    }
}
