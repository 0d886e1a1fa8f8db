import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterNATS

/// The owner's side of one partition: reads the partition's input stream into a ``DetectionEngine``
/// and publishes the events, batch by batch, for as long as its ``PartitionLease`` holds
/// (docs/cluster.md, "The parts").
///
/// Each ``step(maxMessages:wait:)``:
/// 1. renews the lease when a third of the lease time has passed (unless a ``LeaseRenewer`` did), and
///    stops when it is no longer valid;
/// 2. fetches up to `maxMessages` input records and applies them in stream order (updates to
///    ``DetectionEngine/process(_:into:)``, ticks to ``DetectionEngine/advance(to:holding:into:)``);
/// 3. checks the lease again — a worker that lost it publishes nothing more — and publishes the
///    batch's events with their ids as message ids, the first fenced by the expected last sequence
///    of the partition's event subject. A refusal (10071) sends the worker to its lease: lost, it
///    stops; still held (someone else's stale batch landed), it re-reads the subject's last sequence
///    and publishes again, and the duplicate window drops what was already stored.
///
/// Use from one thread at a time.
public final class PartitionWorker: @unchecked Sendable {
    /// What one step did.
    public enum Step: Equatable, Sendable {
        /// Applied this many input records and published this many events (duplicates included).
        case processed(records: Int, events: Int)
        /// No input within the wait.
        case idle
        /// The lease is gone: the worker stopped and does nothing more.
        case leaseLost
    }

    /// Counts since the worker started.
    public struct Statistics: Equatable, Sendable {
        /// Updates applied.
        public var updates = 0
        /// Updates the engine refused (out of order, invalid coordinate or time).
        public var rejected = 0
        /// Ticks applied.
        public var ticks = 0
        /// Ticks this worker left out because they would have changed nothing (``tickUnlessIdle(to:holding:)``).
        public var idleTicksLeftOut = 0
        /// Input messages that were not input records (skipped; see ``lastMalformed``).
        public var malformed = 0
        /// Events stored by this worker's publishes.
        public var eventsStored = 0
        /// Events the stream already had (a replay after a takeover).
        public var duplicateEvents = 0
        /// Event batches published again after a refusal or a failure.
        public var republished = 0
        /// Input consumers opened anew (``PartitionWorker/reopenInput()``).
        public var inputReopens = 0
        /// Input stream sequences the partition needed that had aged out of the stream before it read
        /// them (``PartitionWorker/agedOutInput``); any of its own records among them are lost.
        public var agedOutSequences: UInt64 = 0
    }

    /// The partition.
    public var partition: Int { lease.partition }
    /// The lease it works under.
    public let lease: PartitionLease
    /// The engine, with the partition's devices.
    public private(set) var engine: DetectionEngine
    /// The sequence of the last input message applied (0: none yet).
    public private(set) var inputSequence: UInt64
    /// Counts since the worker started.
    public private(set) var statistics = Statistics()
    /// The last input message that was not an input record.
    public private(set) var lastMalformed: InputRecordError?
    /// Whether the worker has stopped (lease lost).
    public private(set) var stopped = false
    /// Whether the engine holds exactly the input up to ``inputSequence`` with its events published:
    /// `false` after a step that failed between fetching and publishing (the engine is ahead). Such a
    /// worker cannot continue from where it is; its owner builds a new one from the latest snapshot
    /// (``resume(jetStream:layout:lease:snapshots:configuration:fences:fenceBucket:fenceFeed:trace:warning:)``), whose replay
    /// publishes the missing events.
    public private(set) var isConsistent = true
    /// The last fence revision applied (0: none from the fences bucket).
    public private(set) var fenceRevision: UInt64
    /// Each run of input stream sequences after ``inputSequence`` that the stream no longer held when
    /// the worker checked (``checkRetainedInput()``): removed by the stream's retention limits before
    /// this partition read them. The stream holds every partition's records, so not every sequence of
    /// a run was this partition's; but an owned partition ticks 4 times a second, so a run longer than
    /// that means records of its own were lost, and nothing tells which.
    public private(set) var agedOutInput: [ClosedRange<UInt64>] = []
    private var snapshotRevision: UInt64?
    /// When this worker applied each device's latest update (its own clock): who a tick holds.
    private var heardAt: [DeviceID: Date] = [:]

    private let jetStream: JetStream
    private let layout: ClusterLayout
    private var consumer: PullConsumer
    /// The input consumer that replaces ``consumer``, being created off the caller's thread.
    private var reopening: PendingConsumer<PullConsumer>?
    private let fences: FenceFeed.Reader?
    /// Whether ``stop(releasing:)`` closes the feed (one ``resume(jetStream:layout:lease:snapshots:configuration:fences:fenceBucket:fenceFeed:trace:warning:)`` opened for this worker alone).
    var closesFenceFeed = false
    private let trace: (@Sendable (String) -> Void)?
    private let warning: (@Sendable (String) -> Void)?
    private var lastEventSequence: UInt64
    private var lastTickSequence: UInt64
    /// The fence revision of the last tick this worker published (0: none yet).
    private var lastTickedRevision: UInt64 = 0

    /// A worker for `lease`'s partition that continues `engine` from input sequence `startSequence`
    /// (1: from the beginning; a snapshot's covered sequence + 1 after a restore). With `fences`, the
    /// fence set follows the fences bucket at the points the ticks record, read through a reader of its
    /// own from `fenceRevision` (the feed may serve other partitions too; the caller closes it); `engine`
    /// then holds the fences as of `fenceRevision` (none, from the beginning). `trace` gets a line for
    /// each input consumer that failed to open and for its success after failures; `warning` a line when
    /// input it needs has aged out of the stream (``checkRetainedInput()``, checked here and at each snapshot).
    public convenience init(jetStream: JetStream, layout: ClusterLayout, lease: PartitionLease, engine: DetectionEngine,
                            startSequence: UInt64 = 1, fences: FenceFeed? = nil, fenceRevision: UInt64 = 0,
                            trace: (@Sendable (String) -> Void)? = nil, warning: (@Sendable (String) -> Void)? = nil) throws(NATSError) {
        try self.init(jetStream: jetStream, layout: layout, lease: lease, engine: engine, startSequence: startSequence,
                      fenceReader: fences?.reader(after: fenceRevision), fenceRevision: fenceRevision, trace: trace, warning: warning)
    }

    /// A worker as above whose fences follow `fenceReader` (its ``FenceFeed/Reader/revision`` is the
    /// fence revision `engine` holds): the source of fence changes a ``ClusterWorker`` shares between
    /// its partitions. Without a reader, `fenceRevision` is the revision its snapshots record.
    public init(jetStream: JetStream, layout: ClusterLayout, lease: PartitionLease, engine: DetectionEngine,
                startSequence: UInt64 = 1, fenceReader: FenceFeed.Reader?, fenceRevision: UInt64 = 0,
                trace: (@Sendable (String) -> Void)? = nil, warning: (@Sendable (String) -> Void)? = nil) throws(NATSError) {
        self.jetStream = jetStream
        self.trace = trace
        self.warning = warning
        self.fences = fenceReader
        self.fenceRevision = fenceReader?.revision ?? fenceRevision
        self.layout = layout
        self.lease = lease
        self.engine = engine
        inputSequence = startSequence > 0 ? startSequence - 1 : 0
        lastEventSequence = try PartitionWorker.lastSequence(jetStream, stream: layout.eventStream, subject: layout.eventSubject(lease.partition))
        lastTickSequence = try PartitionWorker.lastSequence(jetStream, stream: layout.inputStream, subject: layout.tickSubject(lease.partition))
        let (stream, filter, from) = (layout.inputStream, layout.inputFilter(lease.partition), max(startSequence, 1))
        consumer = try PendingConsumer.create(what: "partition \(lease.partition): input consumer from \(from)",
                                              timeout: PartitionWorker.consumerCreationTimeout * 2, trace: trace,
                                              attempt: { () throws -> PullConsumer in
                                                  try jetStream.pullConsumer(stream: stream, filterSubject: filter, startSequence: from,
                                                                             creationTimeout: PartitionWorker.consumerCreationTimeout)
                                              },
                                              close: { $0.close() })
        try checkRetainedInput()
    }

    deinit {
        reopening?.cancel()
        PendingConsumer.closeInBackground(consumer) { $0.close() }
    }

    /// How long one attempt to create a consumer may wait (it takes milliseconds when the cluster is
    /// well): while a server of a cluster is dead, about one creation in three is placed on it and never
    /// answered (docs/cluster.md, "Recovery after a NATS server dies"); the next attempt is placed anew.
    /// A new worker waits twice this for its first input consumer, attempts overlapping
    /// (``PendingConsumer``).
    public static let consumerCreationTimeout = Duration.seconds(2)

    /// Checks that the input stream still holds everything after ``inputSequence``. A consumer that
    /// starts (or has got) before the stream's first sequence goes on from the first message held and
    /// says nothing, so the worker asks the stream: when its first sequence is past the next one the
    /// partition needs — a new owner whose snapshot is older than what the stream keeps, or an owner
    /// that fell further behind than the retention limits — the run between is recorded in
    /// ``agedOutInput`` and ``Statistics/agedOutSequences``, and reported to `warning` (and `trace`)
    /// once. The worker then continues from the first record held: the lost records' events are not
    /// produced, and their devices continue from the state before them.
    /// - Returns: the run newly found missing, if any.
    @discardableResult
    public func checkRetainedInput() throws(NATSError) -> ClosedRange<UInt64>? {
        let first = try jetStream.streamState(layout.inputStream).firstSequence
        let next = max(inputSequence + 1, (agedOutInput.last?.upperBound ?? 0) + 1)
        guard first > next else { return nil }
        let run = next...(first - 1)
        agedOutInput.append(run)
        statistics.agedOutSequences += UInt64(run.count)
        let line = "partition \(partition): input sequences \(run.lowerBound)–\(run.upperBound) of \(layout.inputStream) aged out "
            + "before this partition read them (the stream's retention limits; it now starts at \(first)): this "
            + "partition's updates and ticks among them are lost, their events will not be produced; continuing from \(first) "
            + "(give --input-max-age more room: docs/cluster.md, \"Retention\")"
        warning?(line)
        trace?(line)
        return run
    }

    /// Whether a new input consumer is being created (``reopenInput()``).
    public var isReopeningInput: Bool { reopening != nil }

    /// One batch: see the type's description.
    /// - Throws: ``NATSError`` when the cluster fails in a way retrying did not cure; the worker can
    ///   step again (its position is unchanged when the events were not all published).
    public func step(maxMessages: Int = 1000, wait: Duration = .milliseconds(250)) throws(NATSError) -> Step {
        switch try leaseStanding() {
        case .lost: return stop()
        case .lapsed: return .idle   // nothing until a renewal decides
        case .held: break
        }
        adoptReopenedInput()
        var messages: [StreamMessage]
        do {
            messages = try consumer.fetch(max: maxMessages, timeout: wait)
        } catch {
            // The consumer's server is likely gone; its replacement is on its way.
            if reopening != nil { return .idle }
            throw error
        }
        if messages.isEmpty { return .idle }
        // A reopened consumer starts where the worker was when the reopen began; the old one may have
        // delivered more since.
        messages.removeAll { $0.sequence <= inputSequence }
        if messages.isEmpty { return .processed(records: 0, events: 0) }
        isConsistent = false
        var events: [GeofenceEvent] = []
        for message in messages {
            do {
                try apply(message, into: &events)
            } catch {
                // The fence set cannot be brought to where the input says: going on would diverge.
                stop(releasing: true)
                throw error
            }
        }
        guard try holdsLease() else { return stop() }
        guard try publish(events) else { return stop() }
        inputSequence = messages.last!.sequence
        isConsistent = true
        return .processed(records: messages.count, events: events.count)
    }

    /// Starts replacing the input consumer with a new one from the sequence after ``inputSequence``, and
    /// returns at once: the new consumer is created off the caller's thread, attempts overlapping
    /// (``PendingConsumer``, ``consumerCreationTimeout`` each), and a later ``step(maxMessages:wait:)`` takes it when it is
    /// there; until then steps go on with the old consumer (a failing fetch is then an idle step), and
    /// what both deliver is applied once, by sequence. An ephemeral consumer lives on one server of the
    /// cluster: when that server dies, its fetches fail or find nothing, which looks like an idle
    /// partition — the owner reopens the input of a partition whose round failed or that has been idle
    /// for a while. Nothing happens while a reopen is under way.
    /// - Returns: `false` when it cannot (stopped, or not ``isConsistent``: rebuild from a snapshot).
    @discardableResult
    public func reopenInput() -> Bool {
        guard !stopped, isConsistent else { return false }
        guard reopening == nil else { return true }
        let (jetStream, stream, filter, from) = (jetStream, layout.inputStream, layout.inputFilter(partition), inputSequence + 1)
        statistics.inputReopens += 1
        reopening = PendingConsumer(what: "partition \(partition): input consumer from \(from)", trace: trace,
                                    attempt: { () throws -> PullConsumer in
                                        try jetStream.pullConsumer(stream: stream, filterSubject: filter, startSequence: from,
                                                                   creationTimeout: PartitionWorker.consumerCreationTimeout)
                                    },
                                    close: { $0.close() })
        return true
    }

    /// Takes the reopened input consumer when it is there.
    private func adoptReopenedInput() {
        guard let next = reopening?.take() else { return }
        reopening = nil
        PendingConsumer.closeInBackground(consumer) { $0.close() }
        consumer = next
    }

    /// Stops: the consumer is closed and every later ``step(maxMessages:wait:)`` answers
    /// ``Step/leaseLost``. The lease is released when it is still held, so another worker can take the
    /// partition at once.
    public func stop(releasing: Bool) {
        if !stopped {
            stopped = true
            reopening?.cancel()
            reopening = nil
            PendingConsumer.closeInBackground(consumer) { $0.close() }
            if closesFenceFeed { fences?.feed.close() }
        }
        if releasing { try? lease.release() }
    }

    /// Appends a tick of the owner's clock to the partition's input: when a later step reads it back,
    /// every timer due by `time` fires, except those of `holding` (docs/cluster.md, "Time"). The timers
    /// fire from the input, not from the clock directly, so that a replay after a takeover fires them at
    /// the same point of the input.
    /// - Returns: `false` when the lease is lost (the tick was refused: another owner ticks here now;
    ///   the worker stopped).
    @discardableResult
    public func tick(to time: Date, holding: [DeviceID] = []) throws(NATSError) -> Bool {
        switch try leaseStanding() {
        case .lost:
            stop(releasing: false)
            return false
        case .lapsed: return true   // no tick until a renewal decides
        case .held: break
        }
        try fences?.feed.poll()
        let revision = fences?.feed.receivedRevision ?? 0
        let tick = InputRecord.tick(partition: partition, time: time, holding: holding.sorted(), fenceRevision: revision)
        var message = tick.message(in: layout)
        while true {
            message.options.expectedLastSubjectSequence = lastTickSequence
            do {
                lastTickSequence = try jetStream.publish(message.subject, message.payload, options: message.options).sequence
                lastTickedRevision = max(lastTickedRevision, revision)
                return true
            } catch where error.reason == .wrongLastSequence {
                guard lease.isValid, try lease.renew() else {
                    stop(releasing: false)
                    return false
                }
                lastTickSequence = try PartitionWorker.lastSequence(jetStream, stream: layout.inputStream, subject: layout.tickSubject(partition))
            }
        }
    }

    /// ``tick(to:holding:)``, left out when it would change nothing (``isIdleTick(to:holding:)``): a
    /// partition with no timer due and no fence change writes no tick (docs/cluster.md, "Time").
    /// - Returns: as ``tick(to:holding:)``; `true` when the tick was left out.
    @discardableResult
    public func tickUnlessIdle(to time: Date, holding: [DeviceID] = []) throws(NATSError) -> Bool {
        if try isIdleTick(to: time, holding: holding) {
            statistics.idleTicksLeftOut += 1
            return true
        }
        return try tick(to: time, holding: holding)
    }

    /// Whether a tick to `time` holding `holding`, read back right after everything this worker has
    /// applied, would change nothing: the fence feed received no revision beyond those already ticked or
    /// applied, and every device the engine has something due for by `time` (a dwell or option timer,
    /// an update a reorder window would release; ``PerimeterEngine/DetectionEngine/devicesWithDwellsDue(by:)``)
    /// is held. Polls the fence feed (at most once per ``FenceFeed/sharedPollInterval``, as a tick does).
    public func isIdleTick(to time: Date, holding: [DeviceID]) throws(NATSError) -> Bool {
        if let fences {
            try fences.feed.poll()
            if fences.feed.receivedRevision > max(lastTickedRevision, fenceRevision) { return false }
        }
        let due = engine.devicesWithDwellsDue(by: time)
        guard !due.isEmpty else { return true }
        let held = Set(holding)
        return due.allSatisfy(held.contains)
    }

    /// The devices whose updates this worker applied within `seconds` before `now` (by its own clock),
    /// for a tick's `holding`; forgets the others.
    public func recentlyHeard(within seconds: Double, now: Date = Date()) -> [DeviceID] {
        heardAt = heardAt.filter { now.timeIntervalSince($0.value) < seconds }
        return heardAt.keys.sorted()
    }

    /// The partition's state now: what a new owner restores to continue after ``inputSequence``.
    public func snapshot() -> PartitionSnapshot {
        PartitionSnapshot(partition: partition, inputSequence: inputSequence, fenceRevision: fenceRevision,
                          devices: engine.deviceSnapshots, engineState: engine.engineState)
    }

    /// Saves ``snapshot()`` while the lease holds, by compare-and-set on the snapshot it last saw.
    /// - Returns: `false` when the lease is lost (the worker stopped; nothing was written).
    @discardableResult
    /// - Throws: ``NATSError`` when the cluster failed, or the lease is lapsed (``PartitionLease/isLapsed``:
    ///   nothing may be written until a renewal decides).
    public func saveSnapshot(to store: SnapshotStore) throws(NATSError) -> Bool {
        switch try leaseStanding() {
        case .lost: return stop() != .leaseLost
        case .lapsed: throw NATSError.timeout("snapshot of partition \(partition)", "its lease lapsed: renewals went unanswered")
        case .held: break
        }
        // A snapshot is taken every few thousand records: a cheap moment to find input lost to lag.
        _ = try? checkRetainedInput()
        let snapshot = snapshot()
        for _ in 0..<2 {
            var previous: UInt64 = 0
            if let known = snapshotRevision {
                previous = known
            } else if let entry = try store.bucket.get(PartitionLease.key(partition)) {
                previous = entry.revision
            }
            do {
                snapshotRevision = try store.save(snapshot, previousRevision: previous)
                return true
            } catch where error.reason == .wrongLastSequence {
                // Someone else saved one: a new owner (then our renewal fails), or a stale one.
                snapshotRevision = nil
                guard lease.isValid, try lease.renew() else { return stop() != .leaseLost }
            }
        }
        return false
    }

    /// A worker that continues `partition` from its latest snapshot in `snapshots` (or from the start
    /// when there is none): the engine gets the fences (from the fences bucket up to the snapshot's fence
    /// revision, read on from there; or the fixed `fences`), then the snapshot's devices, and reads the
    /// input from the sequence after the snapshot's. The fences are read from `fenceFeed` (shared with
    /// other partitions, left open) or, without it, from a feed of its own on `fenceBucket` (closed when
    /// the worker stops). `trace` gets the lines of the input consumer's and its own fence feed's
    /// reopens, `warning` a line when the input after the snapshot has aged out of the stream
    /// (``checkRetainedInput()``).
    public static func resume(jetStream: JetStream, layout: ClusterLayout, lease: PartitionLease, snapshots: SnapshotStore,
                              configuration: DetectionEngine.Configuration = DetectionEngine.Configuration(),
                              fences: [Fence] = [], fenceBucket: KeyValueBucket? = nil, fenceFeed: FenceFeed? = nil,
                              trace: (@Sendable (String) -> Void)? = nil,
                              warning: (@Sendable (String) -> Void)? = nil) throws -> PartitionWorker {
        let latest = try snapshots.latest(lease.partition)?.snapshot
        var engine = DetectionEngine(fences: fences, configuration: configuration)
        var feed = fenceFeed
        var ownFeed = false
        if feed == nil, let fenceBucket {
            let partition = lease.partition
            var feedTrace: (@Sendable (String) -> Void)?
            if let trace { feedTrace = { line in trace("partition \(partition): \(line)") } }
            feed = try FenceFeed(bucket: fenceBucket, trace: feedTrace)
            ownFeed = true
        }
        // From revision 0: the engine starts without the bucket's fences. The reader is handed on, so
        // the feed keeps every change after the snapshot's revision for this partition.
        let reader = feed?.reader(after: 0)
        do {
            if let reader, let latest, latest.fenceRevision > 0 {
                FenceFeed.apply(try reader.take(through: latest.fenceRevision), to: &engine)
            }
            if let latest { try latest.restore(into: &engine) }
            let worker = try PartitionWorker(jetStream: jetStream, layout: layout, lease: lease, engine: engine,
                                             startSequence: (latest?.inputSequence ?? 0) + 1, fenceReader: reader,
                                             fenceRevision: latest?.fenceRevision ?? 0,
                                             trace: trace, warning: warning)
            worker.closesFenceFeed = ownFeed
            return worker
        } catch {
            if ownFeed { feed?.close() }
            throw error
        }
    }

    private func stop() -> Step {
        stop(releasing: false)
        return .leaseLost
    }

    private func apply(_ message: StreamMessage, into events: inout [GeofenceEvent]) throws(NATSError) {
        let record: InputRecord
        do {
            record = try InputRecord(message, in: layout)
        } catch {
            statistics.malformed += 1
            lastMalformed = error
            return
        }
        switch record {
        case .update(let update):
            if engine.process(update, into: &events) == nil { statistics.updates += 1 } else { statistics.rejected += 1 }
            heardAt[update.device] = Date()
        case .tick(_, let time, let holding, let fenceRevision):
            engine.advance(to: time, holding: Set(holding), into: &events)
            if let fences, fenceRevision > fences.revision {
                FenceFeed.apply(try fences.take(through: fenceRevision), to: &engine)
                self.fenceRevision = fenceRevision
            }
            statistics.ticks += 1
        }
    }

    private enum LeaseStanding { case held, lapsed, lost }

    /// Where the lease stands, renewing it when due (a lapsed lease too: see
    /// ``PartitionLease/isLapsed``).
    private func leaseStanding() throws(NATSError) -> LeaseStanding {
        if stopped || lease.isLost { return .lost }
        do {
            if try lease.renewIfDue() { return .held }
        } catch {
            // Unanswered: the lease holds until its validity runs out, then it is lapsed.
        }
        return lease.isLost ? .lost : lease.isValid ? .held : .lapsed
    }

    /// Whether the lease still holds, renewing it when a third of its time has passed (a no-op when a
    /// ``LeaseRenewer`` keeps it fresh).
    private func holdsLease() throws(NATSError) -> Bool {
        if stopped || !lease.isValid { return false }
        do {
            return try lease.renewIfDue()
        } catch {
            // Unreachable for now: the lease holds until isValid says otherwise.
            return lease.isValid
        }
    }

    /// Publishes `events` (in order) until each is stored or known to be; `false` when the lease is lost.
    private func publish(_ events: [GeofenceEvent]) throws(NATSError) -> Bool {
        guard !events.isEmpty else { return true }
        var messages = events.map { EventRecord.message($0, partition: partition, in: layout) }
        var attempts = 0
        while true {
            messages[0].options.expectedLastSubjectSequence = lastEventSequence
            let results = jetStream.publishBatch(messages)
            var refused = false
            var failure: NATSError?
            for result in results {
                switch result {
                case .success(let ack):
                    if ack.duplicate {
                        statistics.duplicateEvents += 1
                    } else {
                        statistics.eventsStored += 1
                        lastEventSequence = max(lastEventSequence, ack.sequence)
                    }
                case .failure(let error):
                    if error.reason == .wrongLastSequence { refused = true } else { failure = failure ?? error }
                }
            }
            if !refused && failure == nil { return true }
            attempts += 1
            statistics.republished += 1
            if refused {
                // Someone else wrote here: a new owner (then our renewal fails) or a stale one.
                guard lease.isValid, try lease.renew() else { return false }
            } else if attempts >= 5 || !lease.isValid {
                throw failure!
            }
            lastEventSequence = try PartitionWorker.lastSequence(jetStream, stream: layout.eventStream, subject: layout.eventSubject(partition))
        }
    }

    private static func lastSequence(_ jetStream: JetStream, stream: String, subject: String) throws(NATSError) -> UInt64 {
        do {
            return try jetStream.lastMessage(stream: stream, subject: subject).sequence
        } catch where error.reason == .notFound {
            return 0
        }
    }
}
