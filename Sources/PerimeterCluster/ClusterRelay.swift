import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterNATS
import PerimeterService
import Synchronization

/// An API node's link to its cluster (`perimeter serve --nats`; docs/cluster.md, "The API node"): the
/// ``PerimeterService/DetectionRelay`` of the node's ``PerimeterService/GeofencingService``.
///
/// - Updates: every update the service accepted is published to its partition's input subject
///   (``ClusterLayout/inputSubject(of:)``, ``InputRecord``) with its identity as the message id, so a
///   client's retry is stored once. A publisher thread gathers what the requests hand over meanwhile
///   into one asynchronous batch — one round trip for many requests — and completes each request once
///   every one of its messages is acknowledged.
/// - Fences: changes are put into (or deleted from) the fences bucket under ``FenceFeed/key(of:)``; a
///   watcher applies every change of the bucket — this node's, and other nodes' — to the service in
///   revision order (``PerimeterService/GeofencingService/applyRelayedFences(upserted:removed:)``), and
///   a change made through this node is answered once the watcher has applied it: the node's copy is
///   always the bucket as of some revision, whatever other nodes change at the same time.
/// - Consent: a change is put into the consent bucket under ``ConsentRecord/key(of:)`` before the
///   service applies it, with the bucket's revision as its position; a watcher applies every change of
///   the bucket — other nodes', and this node's coming back — at its revision
///   (``PerimeterService/GeofencingService/applyRelayedConsent(_:for:position:)``), so each node ends
///   with each key's latest value whatever order the two arrive in, and announces a change once.
/// - Events: a reader thread reads the events stream from its first message, in stream order, and
///   logs each event in the service (``PerimeterService/GeofencingService/logRelayedEvents(_:)``): REST
///   `/v1/events`, the SSE stream, webhooks and the device status all read that log. Every API node reads
///   the same stream in the same order, so they number the events alike.
///
/// ``start(service:)`` returns once the fences and consent buckets have been read and the events stream
/// read to its end as of then; ``stop()`` ends the threads.
public final class ClusterRelay: DetectionRelay, @unchecked Sendable {
    // @unchecked: the mutable state is `queue` and `running`, behind `condition`; the rest is in mutexes.

    /// The cluster's streams and buckets.
    public let resources: ClusterResources
    /// Most messages one published batch holds.
    public let maximumBatch: Int
    private let condition = NSCondition()
    private var queue: [(updates: [LocationUpdate], completion: @Sendable (GeofencingError?) -> Void)] = []
    private var running = false
    // No reference to the service is kept here: the service holds this relay, and its threads hold the
    // service only while they run (until ``stop()``), so nothing outlives a stopped node.
    private let state = Mutex<(eventSequence: UInt64, published: UInt64, batches: UInt64,
                               undecodable: UInt64)>((0, 0, 0, 0))
    private let finished = DispatchGroup()
    /// The running watches (fences, consent), stopped by ``stop()``.
    private let watchers: Mutex<[KeyValueWatcher]> = Mutex([])
    /// Signalled when the fence watcher has applied a revision, for ``relayFences(upserted:removed:)``.
    private let fenceProgress = NSCondition()
    /// The latest fences-bucket revision the watcher applied to the service (behind `fenceProgress`).
    private var appliedFenceRevision: UInt64 = 0
    /// How long ``relayFences(upserted:removed:)`` waits at least for the watcher to apply a stored
    /// change; for a large change, twice as long as storing it took if that is longer (the watcher
    /// applies while the change is being stored, about as fast).
    static let fenceApplyTimeout: Duration = .seconds(10)

    /// A relay for the cluster `resources` describe (``ClusterResources/open(on:layout:replicas:leaseDuration:)``).
    public init(resources: ClusterResources, maximumBatch: Int = 10_000) {
        self.resources = resources
        self.maximumBatch = max(1, maximumBatch)
    }

    /// The stream sequence of the last events-stream message read (0: none).
    public var eventSequence: UInt64 { state.withLock { $0.eventSequence } }
    /// Updates published, and the batches they went out in.
    public var publishing: (updates: UInt64, batches: UInt64) { state.withLock { ($0.published, $0.batches) } }

    /// The API node's cluster gauges on `/metrics` (docs/cluster.md, "What to monitor"): updates and
    /// batches published since the node started, events the node could not decode, the last
    /// events-stream sequence it read, and its lag — events stored on the stream that it has not read
    /// yet (one stream-info request at each scrape; left out when the cluster does not answer).
    public var gauges: [(name: String, help: String, value: Double)] {
        let (sequence, published, batches, undecodable) = state.withLock { ($0.eventSequence, $0.published, $0.batches, $0.undecodable) }
        var gauges: [(name: String, help: String, value: Double)] = [
            ("perimeter_cluster_updates_relayed", "Updates this API node published to the cluster's input since it started.", Double(published)),
            ("perimeter_cluster_relay_batches", "Batches those updates went out in.", Double(batches)),
            ("perimeter_cluster_events_read", "Stream sequence of the last events-stream message this node read.", Double(sequence)),
            ("perimeter_cluster_events_undecodable", "Events-stream messages this node could not decode (skipped).", Double(undecodable)),
        ]
        if let last = try? resources.jetStream.streamState(resources.layout.eventStream).lastSequence {
            gauges.append(("perimeter_cluster_events_lag", "Events stored on the events stream that this node has not read yet.",
                           Double(last > sequence ? last - sequence : 0)))
        }
        return gauges
    }

    /// Starts the publisher, the fence and consent watchers and the events reader for `service` (created
    /// with this relay, configured). Returns once the buckets' fences and consent are applied and the
    /// events stored so far are logged (at most `timeout` for each).
    /// - Throws: ``PerimeterNATS/NATSError`` when the cluster does not answer.
    public func start(service: GeofencingService, timeout: Duration = .seconds(30)) throws(NATSError) {
        condition.withLock { running = true }
        finished.enter()
        Thread.detachNewThread { [self] in
            Thread.current.name = "perimeter-relay-publisher"
            publishLoop()
            finished.leave()
        }
        try watch(resources.fences, thread: "perimeter-relay-fences", timeout: timeout) { [self] in applyFences($0, service: service) }
        try watch(resources.consent, thread: "perimeter-relay-consent", timeout: timeout) { [self] entries in
            for entry in entries { applyConsent(entry, service: service) }
        }
        let streamState = try resources.jetStream.streamState(resources.layout.eventStream)
        let consumer = try events(from: 1)
        let deadline = ContinuousClock.now + timeout
        while eventSequence < streamState.lastSequence && ContinuousClock.now < deadline {
            _ = try readEvents(consumer, service: service, wait: .milliseconds(200))
        }
        finished.enter()
        Thread.detachNewThread { [self] in
            Thread.current.name = "perimeter-relay-events"
            eventLoop(consumer, service: service)
            finished.leave()
        }
    }

    /// Ends the threads (updates still queued are failed) and returns once they ended. Idempotent.
    public func stop() {
        let wasRunning = condition.withLock { () -> Bool in
            defer { running = false }
            condition.broadcast()
            return running
        }
        guard wasRunning else { return }
        watchers.withLock { for watcher in $0 { watcher.stop() } }
        finished.wait()
        let left = condition.withLock { () -> [(updates: [LocationUpdate], completion: @Sendable (GeofencingError?) -> Void)] in
            defer { queue.removeAll() }
            return queue
        }
        for item in left { item.completion(GeofencingError(.storageFailure, "the API node is stopping; the updates were not published")) }
    }

    private var isRunning: Bool { condition.withLock { running } }

    // MARK: DetectionRelay

    public func relay(_ updates: [LocationUpdate], completion: @escaping @Sendable (GeofencingError?) -> Void) {
        let accepted = condition.withLock { () -> Bool in
            guard running else { return false }
            queue.append((updates, completion))
            condition.signal()
            return true
        }
        if !accepted { completion(GeofencingError(.storageFailure, "the API node is not connected to its cluster (stopped or not started)")) }
    }

    /// Stores the changes in the fences bucket, then waits until the watcher has applied the bucket up to
    /// them (``fenceApplyTimeout`` at most): the service's copy then holds them, or a later change of
    /// another node, never an earlier one applied last. Before ``start(service:)`` (no watcher) the
    /// service applies them itself.
    @discardableResult
    public func relayFences(upserted: [GeoJSON.Feature], removed: [FenceID]) throws(GeofencingError) -> Bool {
        var stored: UInt64 = 0
        let storing = ContinuousClock.now
        do throws(NATSError) {
            for feature in upserted {
                guard let id = feature.id else { continue }
                let revision = try resources.fences.put(FenceFeed.key(of: FenceID(id.description)),
                                                        Array(JSONWriter().string(.feature(feature)).utf8))
                stored = max(stored, revision)
            }
            for id in removed { try resources.fences.delete(FenceFeed.key(of: id)) }
            if !removed.isEmpty {
                // A delete does not say its revision; the bucket's last one is it or a later change, and
                // the watcher delivers every revision in order.
                stored = max(stored, try resources.jetStream.streamState("KV_\(resources.fences.name)").lastSequence)
            }
        } catch {
            throw GeofencingError(.storageFailure, "the fence change was not stored in the cluster's fences bucket \(resources.fences.name): \(error)")
        }
        guard isRunning else { return false }
        let patience = max(Self.fenceApplyTimeout, (ContinuousClock.now - storing) * 2)
        let deadline = Date().addingTimeInterval(Double(patience.components.seconds) + Double(patience.components.attoseconds) / 1e18)
        let applied = fenceProgress.withLock { () -> UInt64 in
            while appliedFenceRevision < stored, fenceProgress.wait(until: deadline) {}
            return appliedFenceRevision
        }
        guard applied >= stored else {
            throw GeofencingError(.storageFailure,
                                  "the fence change was stored in the cluster's fences bucket \(resources.fences.name) (revision \(stored)), but this node's watch of the bucket had applied only revision \(applied) after \(patience); the node applies it when its watch catches up, and sending the change again is safe")
        }
        return true
    }

    public func relayConsent(_ isConsentGiven: Bool, for device: DeviceID?) throws(GeofencingError) -> UInt64? {
        do throws(NATSError) {
            return try resources.consent.put(ConsentRecord.key(of: device), ConsentRecord.value(isConsentGiven))
        } catch {
            let whose = device.map { "device \($0)'s consent" } ?? "the service-wide consent"
            throw GeofencingError(.storageFailure,
                                  "\(whose) was not stored in the cluster's consent bucket \(resources.consent.name), so it did not change: \(error)")
        }
    }

    // MARK: Publishing

    private func publishLoop() {
        while true {
            condition.lock()
            while queue.isEmpty && running { condition.wait() }
            if !running {
                condition.unlock()
                return
            }
            // Whole requests, up to the batch size (a larger request goes alone).
            var taken = 0, count = 0
            while taken < queue.count, taken == 0 || count + queue[taken].updates.count <= maximumBatch {
                count += queue[taken].updates.count
                taken += 1
            }
            let batch = Array(queue.prefix(taken))
            queue.removeFirst(taken)
            condition.unlock()
            let layout = resources.layout
            let messages = batch.flatMap { $0.updates.map { InputRecord.update($0).message(in: layout) } }
            let failures = publish(messages)
            state.withLock {
                $0.published += UInt64(messages.count - failures.count)
                $0.batches += 1
            }
            var start = 0
            for item in batch {
                let range = start..<(start + item.updates.count)
                start = range.upperBound
                if let failure = failures.first(where: { range.contains($0.key) }) {
                    item.completion(GeofencingError(.storageFailure,
                                                    "\(failures.keys.filter { range.contains($0) }.count) of the \(item.updates.count) updates were not stored in the cluster's input stream (\(failure.value)); nothing was lost that a retry of the same updates would double: send them again"))
                } else {
                    item.completion(nil)
                }
            }
        }
    }

    /// Publishes `messages` in one batch, and once more those that failed (a leader election may be
    /// under way; the message ids make a second copy harmless). - Returns: the failures by index.
    private func publish(_ messages: [OutgoingMessage]) -> [Int: NATSError] {
        var failures: [Int: NATSError] = [:]
        for (index, result) in resources.jetStream.publishBatch(messages).enumerated() {
            if case .failure(let error) = result { failures[index] = error }
        }
        guard !failures.isEmpty else { return failures }
        usleep(250_000)
        let indexes = failures.keys.sorted()
        for (index, result) in zip(indexes, resources.jetStream.publishBatch(indexes.map { messages[$0] })) {
            if case .success = result { failures[index] = nil }
        }
        return failures
    }

    // MARK: Watches

    /// Hands `watcher`'s entries to `apply` until the initial values are delivered (`untilCaughtUp`, at
    /// most `timeout` in all) or until one wait of `timeout` passes without any. Entries that have
    /// arrived together are handed over together, in revision order (a bulk import of fences is then
    /// applied in a few calls, each building the index once, instead of one build per fence).
    private func drain(_ watcher: KeyValueWatcher, of bucket: KeyValueBucket, untilCaughtUp: Bool, timeout: Duration,
                       apply: ([KeyValueEntry]) -> Void) throws(NATSError) {
        let deadline = ContinuousClock.now + timeout
        var gathered: [KeyValueEntry] = []
        while true {
            // Nothing waits long while entries are gathered: what has arrived is applied first.
            let wait = !gathered.isEmpty ? .milliseconds(1) : untilCaughtUp ? max(deadline - .now, .milliseconds(1)) : timeout
            let update: KeyValueWatcher.Update?
            do {
                update = try watcher.next(timeout: wait)
            } catch {
                apply(gathered)
                throw error
            }
            switch update {
            case nil where !gathered.isEmpty:
                apply(gathered)
                gathered.removeAll(keepingCapacity: true)
            case nil:
                if !untilCaughtUp { return }
                throw NATSError.timeout("watch of \(bucket.name)", "the bucket's values did not arrive within \(timeout)")
            case .caughtUp?:
                apply(gathered)
                gathered.removeAll(keepingCapacity: true)
                if untilCaughtUp { return }
            case .entry(let entry)?:
                gathered.append(entry)
                if gathered.count == 1_000 {
                    apply(gathered)
                    gathered.removeAll(keepingCapacity: true)
                }
            }
        }
    }

    /// Applies revisions of the fences bucket to `service` in order, skipping those applied already (a
    /// replaced watch delivers every key's latest revision again): each run of puts in one call, each
    /// run of deletes in one.
    private func applyFences(_ entries: [KeyValueEntry], service: GeofencingService) {
        guard let last = entries.last else { return }
        let applied = fenceProgress.withLock { appliedFenceRevision }
        var upserted: [GeoJSON.Feature] = []
        var removed: [FenceID] = []
        for entry in entries where entry.revision > applied {
            if entry.operation == .put, case .feature(let feature)? = GeoJSONReader().read(entry.value).object {
                if !removed.isEmpty {
                    _ = try? service.applyRelayedFences(upserted: [], removed: removed)
                    removed.removeAll()
                }
                upserted.append(feature)
            } else {
                if !upserted.isEmpty {
                    _ = try? service.applyRelayedFences(upserted: upserted, removed: [])
                    upserted.removeAll()
                }
                removed.append(FenceID(SubjectToken.decode(entry.key) ?? entry.key))
            }
        }
        _ = try? service.applyRelayedFences(upserted: upserted, removed: removed)
        fenceProgress.withLock {
            appliedFenceRevision = max(appliedFenceRevision, last.revision)
            fenceProgress.broadcast()
        }
    }

    /// Applies one revision of the consent bucket to `service` at its revision. A key deleted by hand
    /// means the default again: given service-wide, the service's `consentByDefault` for a device.
    /// A key or value that is not consent is skipped.
    private func applyConsent(_ entry: KeyValueEntry, service: GeofencingService) {
        guard let owner = ConsentRecord.owner(ofKey: entry.key) else { return }
        var device: DeviceID?
        if case .device(let id) = owner { device = id }
        let isConsentGiven: Bool
        if entry.operation == .put {
            guard let given = ConsentRecord.isConsentGiven(entry.value) else { return }
            isConsentGiven = given
        } else {
            isConsentGiven = device == nil || (service.options?.consentByDefault ?? true)
        }
        // A service that cannot apply it (stopping) loses nothing: a restarted node reads the bucket again.
        _ = try? service.applyRelayedConsent(isConsentGiven, for: device, position: entry.revision)
    }

    /// Watches `bucket`: hands its current values to `apply` before it returns (at most `timeout`), then
    /// every change, on a thread named `thread`, until ``stop()``. A watch that fails (its server died,
    /// the connection closed) is replaced by a new one, which delivers every key's latest revision again:
    /// `apply` skips what it applied already by revision, and misses no change made meanwhile.
    private func watch(_ bucket: KeyValueBucket, thread: String, timeout: Duration,
                       apply: @escaping @Sendable ([KeyValueEntry]) -> Void) throws(NATSError) {
        let first = try bucket.watch()
        watchers.withLock { $0.append(first) }
        try drain(first, of: bucket, untilCaughtUp: true, timeout: timeout, apply: apply)
        finished.enter()
        Thread.detachNewThread { [self] in
            Thread.current.name = thread
            var watcher = first
            while isRunning {
                do throws(NATSError) {
                    try drain(watcher, of: bucket, untilCaughtUp: false, timeout: .milliseconds(250), apply: apply)
                } catch {
                    guard isRunning else { break }
                    usleep(100_000)
                    guard let fresh = try? bucket.watch() else { continue }
                    let old = watcher
                    watchers.withLock { list in
                        list.removeAll { $0 === old }
                        list.append(fresh)
                    }
                    old.stop()
                    watcher = fresh
                }
            }
            // A watch made while ``stop()`` ran may have missed its stop.
            watcher.stop()
            finished.leave()
        }
    }

    // MARK: Events

    private func events(from sequence: UInt64) throws(NATSError) -> PullConsumer {
        try resources.jetStream.pullConsumer(stream: resources.layout.eventStream, filterSubject: "\(resources.layout.prefix).events.*",
                                             startSequence: sequence)
    }

    /// Reads one fetch of events and logs them. - Returns: how many messages were read.
    private func readEvents(_ consumer: PullConsumer, service: GeofencingService, wait: Duration) throws(NATSError) -> Int {
        let messages = try consumer.fetch(max: 1000, timeout: wait)
        guard !messages.isEmpty else { return 0 }
        var events: [GeofenceEvent] = []
        events.reserveCapacity(messages.count)
        var undecodable: UInt64 = 0
        for message in messages {
            if let event = EventRecord.event(message) { events.append(event) } else { undecodable += 1 }
        }
        // A service that cannot log (stopping) loses nothing: a restarted node reads the stream again.
        _ = try? service.logRelayedEvents(events)
        state.withLock {
            $0.eventSequence = messages.last!.sequence
            $0.undecodable += undecodable
        }
        return messages.count
    }

    private func eventLoop(_ first: PullConsumer, service: GeofencingService) {
        var consumer: PullConsumer? = first
        while isRunning {
            do throws(NATSError) {
                if consumer == nil { consumer = try events(from: eventSequence + 1) }
                _ = try readEvents(consumer!, service: service, wait: .milliseconds(250))
            } catch {
                // The consumer may be gone (the server forgot it, or lost its leader): read on from
                // where this node stopped with a new one.
                consumer?.close()
                consumer = nil
                if isRunning { usleep(200_000) }
            }
        }
        consumer?.close()
    }
}
