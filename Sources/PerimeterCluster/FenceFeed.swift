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
/// owner, or a new owner replaying — applies the changes up to it, so each change takes effect at the
/// same point of the input.
///
/// One feed serves every partition of a worker: each partition reads it through a ``Reader`` of its
/// own, which remembers the revision that partition has applied. The feed keeps the changes some reader
/// has yet to apply, and otherwise what the bucket itself keeps with a history of 1 (a key's latest
/// revision): a reader that starts behind what the feed kept (a snapshot's older revision) gets what a
/// consumer of its own from that revision would get from such a bucket.
///
/// The feed reads through an ephemeral consumer, which lives on one server of the cluster. When a
/// fetch fails (its server died), or nothing arrived for ``idleReopenInterval`` (a dead consumer and a
/// quiet bucket look alike), a new consumer from the next revision is created off the caller's thread
/// (``PendingConsumer``); until it is there the feed receives nothing, so ticks record an older revision
/// — which every replay applies alike. Safe to use from several threads (the fetches are serialized).
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

    /// One partition's place in a ``FenceFeed``: the revision it has applied. While it exists, the feed
    /// keeps every change after that revision. Use from one thread at a time.
    public final class Reader: @unchecked Sendable {
        /// The feed read.
        public let feed: FenceFeed
        /// The revision up to which changes were taken (0: none).
        public private(set) var revision: UInt64
        fileprivate let id: Int

        fileprivate init(feed: FenceFeed, revision: UInt64, id: Int) {
            self.feed = feed
            self.revision = revision
            self.id = id
        }

        deinit { feed.unregister(self) }

        /// The changes after ``revision`` up to `revision`, in revision order, waiting (at most
        /// `timeout`) until the feed has received that revision; nothing when it is not past ``revision``.
        /// - Throws: ``NATSError`` with reason ``NATSError/Reason/timeout`` when it did not arrive in time.
        public func take(through revision: UInt64, timeout: Duration = .seconds(10)) throws(NATSError) -> [Change] {
            guard revision > self.revision else { return [] }
            let changes = try feed.changes(for: self, through: revision, timeout: timeout)
            self.revision = revision
            feed.advance(self)
            return changes
        }
    }

    /// The bucket read.
    public let bucket: KeyValueBucket
    /// After this long without a change, the feed's consumer is opened anew.
    public let idleReopenInterval: Duration
    private let lock = NSLock()
    private var changes: KeyValueChanges
    private var reopening: PendingConsumer<KeyValueChanges>?
    private var nextRevision: UInt64
    private var quietSince = ContinuousClock.now
    private var received: UInt64 = 0
    private var reopenCount = 0
    /// When the last fetch ended.
    private var lastPoll: ContinuousClock.Instant?
    /// ``close()`` was called: nothing is read or reopened any more.
    private var closed = false
    /// The changes kept, in revision order, with their keys.
    private var log: [(revision: UInt64, key: String, change: Change)] = []
    /// Each key's newest revision in ``log``.
    private var newest: [String: UInt64] = [:]
    /// Each reader's applied revision, by reader id.
    private var readers: [Int: UInt64] = [:]
    private var nextReaderID = 0
    private let loader: FenceLoader
    private let trace: (@Sendable (String) -> Void)?

    /// The key of fence `id`.
    public static func key(of id: FenceID) -> String { SubjectToken.encode(id.rawValue) }

    /// Reads every revision from `revision` on (1: all the bucket still has), oldest first. The bucket's
    /// `history` bounds how far back a replay can rebuild the fence set. `trace` gets a line for each
    /// failed fetch and each reopen that failed or succeeded after failures.
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

    /// The highest revision received so far (0: none).
    public var receivedRevision: UInt64 { lock.withLock { received } }
    /// Consumers opened anew so far.
    public var reopens: Int { lock.withLock { reopenCount } }
    /// Consumers created so far: the first and each reopen.
    public var consumersCreated: Int { lock.withLock { 1 + reopenCount } }
    /// How many changes the feed holds now (for tests and gauges).
    public var keptChanges: Int { lock.withLock { log.count } }

    /// A reader that has applied the changes up to `revision` (0: none; a snapshot's fence revision).
    public func reader(after revision: UInt64) -> Reader {
        lock.withLock {
            let id = nextReaderID
            nextReaderID += 1
            readers[id] = revision
            return Reader(feed: self, revision: revision, id: id)
        }
    }

    /// Stops reading: the consumer is closed off this thread (``PendingConsumer/closeInBackground(_:_:)``),
    /// and one being created is abandoned; a reader waiting for a revision gets an error at once.
    /// Idempotent.
    public func close() {
        lock.withLock {
            guard !closed else { return }
            closed = true
            reopening?.cancel()
            reopening = nil
            PendingConsumer.closeInBackground(changes) { $0.close() }
        }
    }

    /// Whether a new consumer is being created.
    public var isReopening: Bool { lock.withLock { reopening != nil } }

    /// Reads what has arrived, waiting at most `wait` for the first change (zero: only what is there
    /// now; a change written a moment ago may come with the next poll). A failed fetch is not an error
    /// here: the feed opens a new consumer and receives nothing until it is there.
    ///
    /// A poll without a wait within ``sharedPollInterval`` of the last one reads nothing: the partitions
    /// of a worker tick one after another in one round, and each tick polls; one fetch serves them all
    /// (a tick may record a revision received up to that long ago, which every replay applies alike).
    public func poll(wait: Duration = .zero) throws(NATSError) {
        lock.lock()
        defer { lock.unlock() }
        if wait == .zero, let lastPoll, ContinuousClock.now - lastPoll < FenceFeed.sharedPollInterval { return }
        pollLocked(wait: wait)
    }

    /// How long a poll without a wait serves the next ones (see ``poll(wait:)``).
    public static let sharedPollInterval = Duration.milliseconds(50)

    private func pollLocked(wait: Duration) {
        guard !closed else { return }
        defer { lastPoll = .now }
        if let next = reopening?.take() {
            reopening = nil
            PendingConsumer.closeInBackground(changes) { $0.close() }
            changes = next
        }
        var timeout = max(wait, .milliseconds(1))
        var arrived = false
        defer { if arrived { compact() } }
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
                log.append((entry.revision, entry.key, change(entry)))
                newest[entry.key] = entry.revision
                received = max(received, entry.revision)
                nextRevision = entry.revision + 1
                arrived = true
            }
            quietSince = .now
            timeout = .milliseconds(1)
        }
    }

    /// Starts creating a consumer from ``nextRevision`` off this thread, unless one is on its way.
    private func reopen() {
        quietSince = .now
        guard reopening == nil else { return }
        reopenCount += 1
        let (bucket, from) = (bucket, nextRevision)
        reopening = PendingConsumer(what: "fence feed from revision \(from)", trace: trace,
                                    attempt: { () throws -> KeyValueChanges in
                                        try bucket.changes(from: from, creationTimeout: PartitionWorker.consumerCreationTimeout)
                                    },
                                    close: { $0.close() })
    }

    /// The kept changes after `reader`'s revision up to `revision`, once the feed has received it. The
    /// lock is held for each poll only, so that other partitions' ticks are not held up by a reader
    /// waiting for a revision that is slow to come.
    private func changes(for reader: Reader, through revision: UInt64, timeout: Duration) throws(NATSError) -> [Change] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (have, taken) = lock.withLock { () -> (UInt64?, [Change]?) in
                pollLocked(wait: .zero)
                guard received >= revision else { return (closed ? nil : received, nil) }
                return (received, log.filter { $0.revision > reader.revision && $0.revision <= revision }.map(\.change))
            }
            if let taken { return taken }
            guard let have else {
                throw NATSError(operation: "fence feed of \(bucket.name)", status: 0,
                                statusText: "closed", jetStreamCode: 0, text: "the feed was closed before revision \(revision) came")
            }
            guard deadline > .now else {
                throw NATSError.timeout("fence feed of \(bucket.name)", "revision \(revision) not received within \(timeout) (received \(have))")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    fileprivate func advance(_ reader: Reader) {
        lock.withLock {
            readers[reader.id] = reader.revision
            compact()
        }
    }

    fileprivate func unregister(_ reader: Reader) {
        lock.withLock {
            readers[reader.id] = nil
            compact()
        }
    }

    /// Drops the changes every reader has applied that a later revision of the same key replaced (what
    /// a bucket with a history of 1 drops too). Called with the lock held.
    private func compact() {
        let floor = readers.values.min() ?? .max
        guard log.contains(where: { $0.revision <= floor && newest[$0.key]! > $0.revision }) else { return }
        log.removeAll { $0.revision <= floor && newest[$0.key]! > $0.revision }
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
