import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import Synchronization

/// Geofencing as a library: monitors GeoJSON features, turns location updates into entry, dwell and exit
/// events, and keeps its state in a ``GeofencingStore`` so that a restart resumes exactly.
///
/// The API follows Mapbox's `GeofencingService` (configure, add/remove features, observers, user
/// consent) and adds what a server needs: many devices, batches, a durable event log. The engine
/// underneath is synchronous; one lock serialises calls, so the service can be shared by many tasks.
///
/// ```swift
/// let service = GeofencingService(store: try SQLiteGeofencingStore(path: "state.sqlite"))
/// try service.configure(GeofencingOptions(defaultDwellTime: 300))
/// try service.addFeature(feature)
/// let result = try service.process(updates)
/// ```
public final class GeofencingService: Sendable {
    let store: any GeofencingStore
    /// `store` when it is an ``InMemoryGeofencingStore`` itself (not behind a wrapper): then commits are
    /// made in place, under the lock (``ServiceCore/commitInPlace(lazily:)``).
    let inMemoryStore: InMemoryGeofencingStore?
    let core = ServiceLock(ServiceCore())
    /// Serialises commits, outside `core`'s lock, and lets concurrent callers share them.
    let groupCommit = GroupCommit()
    /// Runs the Mapbox-shaped calls (`async` and callback forms, GeofencingService+Mapbox.swift) one
    /// after another, in the order they were made, off the caller's thread.
    let mapboxCalls = DispatchQueue(label: "perimeter.geofencing-service.calls")

    /// Where live time is read (``GeofencingOptions/TimeModel/live``).
    public let clock: any GeofencingClock
    /// Seconds between the clock's ticks (``tick()``), or `nil` when the caller ticks.
    let tickInterval: Double?
    /// The thread that ticks, once a live configuration started it.
    let ticker = Mutex<ServiceTicker?>(nil)
    /// Where detection is handed over when other processes run the engine (``DetectionRelay``), or `nil`.
    public let relay: (any DetectionRelay)?

    /// Creates a service on `store` (by default an in-memory one). Call ``configure(_:)`` before use.
    ///
    /// With the default ``GeofencingOptions/TimeModel/live`` time model the service reads `clock` and,
    /// every `tickInterval` seconds, fires the timers that fell due (``tick()``) on a thread of its own,
    /// so a device that stops reporting still gets its dwell. Pass `tickInterval: nil` to call ``tick()``
    /// yourself (tests with a ``ManualClock``).
    ///
    /// With a `relay`, the service detects nothing itself: see ``DetectionRelay``.
    public init(store: any GeofencingStore = InMemoryGeofencingStore(), clock: any GeofencingClock = SystemClock(),
                tickInterval: Double? = 0.25, relay: (any DetectionRelay)? = nil) {
        self.store = store
        self.inMemoryStore = store as? InMemoryGeofencingStore
        self.relay = relay
        self.clock = clock
        self.tickInterval = tickInterval.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
    }

    deinit {
        ticker.withLock { $0?.stop() }
        // Finish outside the lock: a stream's termination handler takes the lock itself. Taking it also
        // pays the device states owed to the in-memory store (``ServiceCore/lockTaken()``): after this
        // nothing else holds them.
        let streams = core.withLock { c in Array(c.streams.values) }
        for continuation in streams { continuation.finish() }
    }

    /// Applies `options`. The first call loads the store (fences, device state, consent, event log
    /// position); later calls rebuild the engine with the new options and keep every device's state
    /// (option state included). Updates waiting in a reorder window that these options turn off are
    /// processed now; their events are logged, committed and reported like those of `process`.
    ///
    /// - Throws: ``GeofencingError/Code/invalidArgument`` for bad options;
    ///   ``GeofencingError/Code/incompatibleStorage`` when the store holds data that cannot be used
    ///   (a foreign or newer database, a damaged file); ``GeofencingError/Code/storageFailure`` when it
    ///   cannot be read. The service is then left as it was.
    public func configure(_ options: GeofencingOptions) throws(GeofencingError) {
        if let problem = options.validate() { throw problem }
        let (released, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> ([GeofencingEvent], UInt64?) in
            if c.options == nil {
                let state: StoredState
                do {
                    state = try store.load()
                } catch {
                    throw GeofencingError.storage(error, while: "loading the stored state")
                }
                var fresh = ServiceCore()
                fresh.batch = c.batch
                fresh.observers = c.observers
                fresh.streams = c.streams
                fresh.sink = c.sink
                fresh.sinkWhenStored = c.sinkWhenStored
                fresh.nextStreamID = c.nextStreamID
                fresh.storeReadsEventIDs = inMemoryStore == nil
                fresh.inPlace = inMemoryStore.map { InPlaceStore(store: $0, lock: core) }
                try fresh.load(state, options: options)
                c = fresh
            } else {
                try c.rebuild(options: options, order: c.orderedFenceIDs, devices: c.engine.deviceSnapshots,
                              engineState: c.engine.engineState)
            }
            var released: [GeofencingEvent] = []
            c.releaseOrphanedUpdates(into: &released)
            return (released, released.isEmpty ? nil : c.commitTicket())
        }
        if options.timeModel == .live, let tickInterval {
            ticker.withLock { ticker in
                if ticker == nil { ticker = ServiceTicker(interval: tickInterval, service: self) }
            }
        }
        let failure = ticket.flatMap(commit(through:))
        notify(events: released, errors: failure.map { [$0] } ?? [])
        if let failure { throw failure }
    }

    /// The options in use, or `nil` before ``configure(_:)``.
    public var options: GeofencingOptions? { core.withLock { $0.options } }

    /// Commits every pending change to the store now (a no-op when nothing is pending).
    ///
    /// With ``GeofencingOptions/Durability/everyUpdates(_:)`` this is how a caller makes everything
    /// processed so far durable; it is also how to retry after a ``GeofencingError/Code/storageFailure``.
    public func flush() throws(GeofencingError) {
        if let failure = commit(through: core.withLock { $0.batch }) { throw failure }
    }

    /// Returns once the changes of batch `ticket` (and every earlier one) are stored, committing them
    /// unless another caller's commit does (``GroupCommit``). Never called with the lock held.
    /// - Returns: the error of the commit this call ran, if it failed (the changes stay pending).
    func commit(through ticket: UInt64) -> GeofencingError? {
        groupCommit.commit(through: ticket) { runCommit() }
    }

    /// Calls `completion` once the changes of batch `ticket` are stored, or a commit that tried to
    /// store them failed, from ``GroupCommit``'s committer thread; never blocks.
    func whenStored(_ ticket: UInt64, committer: DeferredCommitter,
                    then completion: @escaping @Sendable (GeofencingError?) -> Void) {
        switch committer {
        case .serviceThread:
            // Weak: the committer thread outlives its last completion by a moment. While a completion
            // waits, it keeps the service alive itself.
            groupCommit.whenStored(ticket, commit: { [weak self] in
                self?.runCommit() ?? .init(durableBelow: nil, error: .notConfigured)
            }, then: completion)
        case .caller:
            groupCommit.whenStored(ticket, commit: nil, then: completion)
        }
    }

    /// Commits every pending change and runs the completions of ``process(_:committer:whenStored:)``
    /// that are then due, on this thread. With ``DeferredCommitter/caller`` this is what completes them:
    /// an event loop calls it at the end of every round, so one commit answers every request of the
    /// round — and of the rounds other loops finished meanwhile.
    ///
    /// Never waits for another thread: when a commit is already at work it returns 0 at once, and that
    /// commit, when it ends with completions still waiting, calls the handler given to
    /// ``onCompletionsWaiting(_:)`` so that their owners call again.
    /// - Returns: how many completions ran.
    /// - Complexity: one store transaction for everything pending, or none.
    @discardableResult
    public func commitWaiting() -> Int {
        groupCommit.commitWaiting { runCommit(yielding: false) }
    }

    /// Sets what to call when a commit ends while completions of ``DeferredCommitter/caller`` calls
    /// still wait (registered during it): their owners should call ``commitWaiting()`` soon — an event
    /// loop wakes up for a round. Called on the thread that ran the commit, outside the service's lock;
    /// it must not block.
    public func onCompletionsWaiting(_ handler: (@Sendable () -> Void)?) {
        groupCommit.setNudge(handler)
    }

    /// One commit as the group's committer: takes every pending change, stores it without the lock
    /// (the in-memory store: with it), and records the outcome (on failure the changes are put back for
    /// the next commit).
    func runCommit(yielding: Bool = true) -> GroupCommit.Outcome {
        // Let threads that are ready to run go first (on a small machine often a request just
        // parsed): their changes then join this commit instead of waiting for the next one.
        // Measured over HTTP, 16 connections, 4 server threads: 6.4 k single-update requests/s
        // without this yield, 7.9 k with it (p99 17 ms both). An event loop committing at the end of
        // its round has nothing to wait for.
        if yielding { sched_yield() }
        // The in-memory store has nothing to wait for: its commit is made under the lock, the engine
        // writing the devices' states into it (``ServiceCore/commitInPlace(lazily:)``).
        if inMemoryStore != nil { return core.withLock { $0.commitInPlace(lazily: true) } }
        var work = core.withLock { $0.takeChanges() }
        if !work.isEmpty {
            do {
                try store.commit(work.changes)
            } catch {
                core.withLock { $0.failed(work) }
                return .init(durableBelow: nil, error: CommitWork.storageError(error, work.changes),
                             attemptedThrough: work.batch)
            }
            core.withLock { $0.committed(&work) }
        }
        return .init(durableBelow: work.batch + 1, error: nil)
    }

    /// Flushes, ends every event stream, and returns the service to the unconfigured state.
    /// ``configure(_:)`` may be called again afterwards (it reloads from the store).
    public func close() throws(GeofencingError) {
        let streams = try groupCommit.exclusively { () throws(GeofencingError) -> [AsyncStream<GeofencingEvent>.Continuation] in
            try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> [AsyncStream<GeofencingEvent>.Continuation] in
                if c.options != nil { try c.commitHoldingLock(store) }
                let streams = Array(c.streams.values)
                let observers = c.observers, batch = c.batch, sink = c.sink, whenStored = c.sinkWhenStored
                c = ServiceCore()
                c.observers = observers
                c.sink = sink
                c.sinkWhenStored = whenStored
                c.batch = batch
                return streams
            }
        }
        ticker.withLock { ticker in
            ticker?.stop()
            ticker = nil
        }
        // Finish outside the lock: a stream's termination handler takes the lock itself.
        for continuation in streams { continuation.finish() }
    }

    /// Counters of the engine since the last ``configure(_:)``.
    public var statistics: DetectionEngine.Statistics { core.withLock { $0.engine.statistics } }

    /// How many updates the service has consumed in total (accepted or rejected, across restarts).
    ///
    /// Right after ``configure(_:)`` on a reopened store this is the number of updates that were
    /// committed: a caller replaying a stream resumes after that many.
    public var processedUpdateCount: UInt64 { core.withLock { $0.processedUpdates } }

    /// How many store transactions the service committed since it was configured. With group commit,
    /// concurrent calls share transactions: ``processedUpdateCount`` over this is the updates per commit.
    public var commitCount: UInt64 { core.withLock { $0.commits } }

    /// The sequence number of the last logged event (0 when none).
    public var lastEventSequence: Int64 { core.withLock { $0.lastSequence } }

    /// Up to `limit` committed events after `sequence`, from the store (the outbox).
    public func loggedEvents(after sequence: Int64, limit: Int = 1000) throws(GeofencingError) -> [GeofencingEvent] {
        do {
            return try store.events(after: sequence, limit: limit)
        } catch {
            throw GeofencingError.storage(error, while: "reading the event log")
        }
    }
}
