import Foundation
import PerimeterEngine
import PerimeterGeoJSON

extension GeofencingService {
    /// Processes one update.
    ///
    /// - Returns: the events it caused, in log order.
    /// - Throws: ``GeofencingError/Code/consentMissing`` (nothing processed or stored),
    ///   ``GeofencingError/Code/outOfOrderUpdate``, ``GeofencingError/Code/invalidLocation`` or
    ///   ``GeofencingError/Code/inaccurateLocation`` for a rejected update (it still counts as consumed),
    ///   ``GeofencingError/Code/storageFailure``, ``GeofencingError/Code/notConfigured``.
    @discardableResult
    public func process(_ update: LocationUpdate) throws(GeofencingError) -> [GeofencingEvent] {
        let result = try process(CollectionOfOne(update)[...])
        if let rejection = result.rejections.first { throw rejection.error }
        return result.events
    }

    /// Processes a batch of updates in order, committing once (group commit).
    ///
    /// With ``GeofencingOptions/TimeModel/data`` each update first advances the clock to its time.
    /// Rejected updates are reported in the result (and to observers' `onError`); they change no
    /// state. With ``GeofencingOptions/Durability/everyCall``, when this returns every update of the
    /// batch, the state it produced and its events are committed.
    ///
    /// - Throws: ``GeofencingError/Code/consentMissing`` when any update's device lacks consent — then
    ///   nothing of the batch is processed or stored; ``GeofencingError/Code/storageFailure`` when the
    ///   commit failed (the batch was processed in memory, observers were told, and the changes are
    ///   retried by the next commit); ``GeofencingError/Code/notConfigured``.
    /// - Complexity: the engine's cost per update plus one hash insertion; one store transaction.
    @discardableResult
    public func process(_ batch: [LocationUpdate]) throws(GeofencingError) -> BatchResult {
        try process(batch[...])
    }

    /// Processes a slice of updates; see ``process(_:)-(Array)``.
    @discardableResult
    public func process(_ batch: ArraySlice<LocationUpdate>) throws(GeofencingError) -> BatchResult {
        try processBatch(batch)
    }

    /// Processes any collection of updates; see ``process(_:)-(Array)``.
    @discardableResult
    public func process<Updates: Collection>(_ batch: Updates) throws(GeofencingError) -> BatchResult
    where Updates.Element == LocationUpdate {
        try processBatch(Array(batch)[...])
    }

    /// Processes a batch like ``process(_:)-(Array)`` without waiting for its commit: `completion` gets
    /// the result once the batch's changes are stored (with ``GeofencingOptions/Durability/everyCall``),
    /// or a ``GeofencingError/Code/storageFailure`` when that commit failed (the changes stay pending
    /// for the next one). Observers are told just before.
    ///
    /// The batch is processed before this returns, so calls made one after another are processed in
    /// that order. Meanwhile other calls go on, and one commit stores every batch that waits for it: a
    /// server answers many requests with one transaction this way, while none of its threads waits.
    ///
    /// `completion` runs on the service's committer thread, or on the calling thread when there is
    /// nothing to wait for (an error before processing, nothing to store, or a durability policy that
    /// does not commit now). It must not block; hand longer work to another thread.
    /// - Complexity: as ``process(_:)-(Array)``; the completion costs O(1) of the committer's time.
    ///
    /// `committer` says who commits for the completion: the service's own thread (the default), or the
    /// caller, which then calls ``commitWaiting()`` soon (an event loop at the end of each round); the
    /// completion then runs on that caller's thread.
    public func process(_ batch: [LocationUpdate], committer: DeferredCommitter = .serviceThread,
                        whenStored completion: @escaping @Sendable (Result<BatchResult, GeofencingError>) -> Void) {
        if let relay {
            relayBatch(batch[...], simulated: false, to: relay, completion: completion)
            return
        }
        let result: BatchResult, ticket: UInt64?
        do throws(GeofencingError) {
            (result, ticket) = try processWithoutCommit(batch[...])
        } catch {
            completion(.failure(error))
            return
        }
        guard let ticket else {
            notify(events: result.events, errors: result.rejections.map(\.error))
            completion(.success(result))
            return
        }
        whenStored(ticket, committer: committer) { [self] failure in
            notify(events: result.events, errors: result.rejections.map(\.error) + (failure.map { [$0] } ?? []))
            completion(failure.map { .failure($0) } ?? .success(result))
        }
    }

    /// Processes, commits (when due) and reports `batch`; `simulated` as for ``processWithoutCommit(_:simulated:)``.
    func processBatch<Updates: Collection>(_ batch: Updates, simulated: Bool = false) throws(GeofencingError) -> BatchResult
    where Updates.Element == LocationUpdate {
        if let relay { return try relayBatchAndWait(batch, simulated: simulated, to: relay) }
        if let inMemoryStore { return try processCommittingInPlace(batch, simulated: simulated, store: inMemoryStore) }
        let (result, ticket) = try processWithoutCommit(batch, simulated: simulated)
        let failure = ticket.flatMap(commit(through:))
        notify(events: result.events, errors: result.rejections.map(\.error) + (failure.map { [$0] } ?? []))
        if let failure { throw failure }
        return result
    }

    /// ``processBatch(_:simulated:)`` on the in-memory store: the batch processed and, when the durability
    /// policy wants a commit, committed in the same hold of the lock (as the group's committer), the
    /// states of the devices the store holds left owed (``ServiceCore/commitInPlace(lazily:)``). Nothing
    /// can read the engine between the batch and its commit, so each device it changed is owed as it is
    /// committed; and the states owed by earlier commits are those of devices the batch left alone or
    /// committed again. Without a commit due (or when the commit is bound to fail: a log another
    /// service wrote), the owed states are paid first, as in every other hold.
    func processCommittingInPlace<Updates: Collection>(_ batch: Updates, simulated: Bool,
                                                       store: InMemoryGeofencingStore) throws(GeofencingError) -> BatchResult
    where Updates.Element == LocationUpdate {
        let now = clock.now().timeIntervalSince1970
        let (result, outcome) = try groupCommit.commitAlongside { () throws(GeofencingError) -> (BatchResult, GroupCommit.Outcome?) in
            try core.withLockAsIs { (c: inout ServiceCore) throws(GeofencingError) -> (BatchResult, GroupCommit.Outcome?) in
                let commits = c.commitDue(adding: batch.count)
                if !commits || !store.continuesLog(after: c.lastSequence) { c.payOwedStates() }
                let (result, _) = try Self.processLocked(batch, simulated: simulated, now: now, core: &c)
                return (result, commits ? c.commitInPlace(lazily: true) : nil)
            }
        }
        let failure = outcome?.error
        notify(events: result.events, errors: result.rejections.map(\.error) + (failure.map { [$0] } ?? []))
        if let failure { throw failure }
        return result
    }

    /// Processes `batch` under the lock.
    ///
    /// With the live time model, `simulated` updates keep their own time: they are never refused as
    /// future-dated (a simulation may run faster than real time).
    /// - Returns: the result, and the ticket of the commit that must store it (`nil`: none is due).
    func processWithoutCommit<Updates: Collection>(_ batch: Updates, simulated: Bool = false) throws(GeofencingError)
        -> (BatchResult, UInt64?) where Updates.Element == LocationUpdate {
        let now = clock.now().timeIntervalSince1970
        return try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> (BatchResult, UInt64?) in
            try Self.processLocked(batch, simulated: simulated, now: now, core: &c)
        }
    }

    /// ``processWithoutCommit(_:simulated:)``'s work, with the lock held.
    private static func processLocked<Updates: Collection>(_ batch: Updates, simulated: Bool, now: Double,
                                                           core c: inout ServiceCore) throws(GeofencingError)
        -> (BatchResult, UInt64?) where Updates.Element == LocationUpdate {
        let options = try c.configured()
        try Self.checkConsent(batch, c, options)
        var result = BatchResult()
        var events: [GeofenceEvent] = []
        let maximumAccuracy = options.maximumHorizontalAccuracy
        let live = options.timeModel == .live
        let latestAccepted = now + options.maximumFutureSkew
        // The batch paths; the loop below is for live batches with an update of a device that has a
        // timer floor (whether a later update is moved to the floor depends on whether an earlier one
        // was accepted).
        if !live || c.timerFloors.isEmpty || !batch.contains(where: { c.timerFloors[$0.device] != nil }) {
            if live {
                Self.processLive(batch, simulated: simulated, now: now, options: options, core: &c, into: &result)
            } else {
                Self.processOnDataClock(batch, options: options, core: &c, into: &result)
            }
            c.processedUpdates += UInt64(batch.count)
            c.pending.processedUpdatesChanged = true
            c.pending.updates += batch.count
            return (result, c.commitTicket())
        }
        for (index, original) in batch.enumerated() {
            var update = original
            let t = update.time.timeIntervalSince1970
            if !simulated, t > latestAccepted {
                c.timeStatistics.futureUpdates += 1
                result.rejections.append(.init(index: index, error: Self.futureUpdate(update, now: now, options: options)))
                continue
            }
            // The clock already fired timers for this device without a fix, up to `floor`:
            // what the device did before that is evaluated as of then (docs/semantics.md).
            if let floor = c.timerFloors[update.device], t < floor {
                update.time = Date(timeIntervalSince1970: floor)
                c.timeStatistics.lateUpdates += 1
            }
            if let refusal = Self.inaccurateLocation(update, maximum: maximumAccuracy) {
                result.rejections.append(.init(index: index, error: refusal))
                continue
            }
            // The device's own clock: its timers due by this update's time fire first, with its
            // last position, exactly as in a replay (docs/semantics.md).
            let before = events.count
            c.engine.advance(update.device, to: update.time, into: &events)
            if events.count > before { c.touch(update.device) }
            if let rejection = c.engine.process(update, into: &events) {
                result.rejections.append(.init(index: index, error: GeofencingError(rejection)))
            } else {
                c.touch(update.device)
                c.lastArrivals[update.device] = now
                c.timerFloors.removeValue(forKey: update.device)
            }
        }
        c.log(events, into: &result.events)
        c.processedUpdates += UInt64(batch.count)
        c.pending.processedUpdatesChanged = true
        c.pending.updates += batch.count
        // The commit runs after the lock is released, so that calls made meanwhile by other
        // threads are processed during it and share the next one (see `GroupCommit`).
        return (result, c.commitTicket())
    }

    /// The data clock's batch: each update first advances every device's clock to its time, then goes
    /// to the engine unless it is too inaccurate — in one engine call
    /// (``ShardedEngine/processOnDataClock(_:clockOnly:)``), which also says which devices changed, once
    /// each. Gives exactly the events, rejections and changes of one engine call per update.
    private static func processOnDataClock<Updates: Collection>(_ batch: Updates, options: GeofencingOptions,
                                                               core c: inout ServiceCore, into result: inout BatchResult)
    where Updates.Element == LocationUpdate {
        let done: Void? = batch.withContiguousStorageIfAvailable { updates in
            processOnDataClock(updates, options: options, core: &c, into: &result)
        }
        if done == nil {
            Array(batch).withUnsafeBufferPointer { updates in
                processOnDataClock(updates, options: options, core: &c, into: &result)
            }
        }
    }

    /// ``processOnDataClock(_:options:core:into:)`` on the batch in place.
    private static func processOnDataClock(_ updates: UnsafeBufferPointer<LocationUpdate>, options: GeofencingOptions,
                                           core c: inout ServiceCore, into result: inout BatchResult) {
        var refused: [BatchResult.Rejection] = []
        var clockOnly: [Int] = []
        if let maximum = options.maximumHorizontalAccuracy {
            for index in updates.indices {
                guard let refusal = inaccurateLocation(updates[index], maximum: maximum) else { continue }
                refused.append(.init(index: index, error: refusal))
                clockOnly.append(index)
            }
        }
        let output = c.engine.processOnDataClock(updates, clockOnly: clockOnly)
        c.touch(output.changedDevices, slots: output.changedDeviceSlots)
        // Both lists are in batch order, and no update is in both.
        let rejections = output.rejections
        if rejections.isEmpty {
            result.rejections += refused
        } else {
            var f = 0
            result.rejections.reserveCapacity(result.rejections.count + refused.count + rejections.count)
            for rejection in rejections {
                while f < refused.count, refused[f].index < rejection.index {
                    result.rejections.append(refused[f])
                    f += 1
                }
                result.rejections.append(.init(index: rejection.index, error: GeofencingError(rejection.rejection)))
            }
            result.rejections.append(contentsOf: refused[f...])
        }
        c.log(output.events, into: &result.events)
    }

    /// The live time model's batch, when no device of it has a timer floor: the checks that need no
    /// engine state first, then every remaining update through the engine at once (its shards in
    /// parallel; each update preceded by its device's own timers), then the bookkeeping, in batch order.
    /// Gives exactly the events, rejections and changes of the update-by-update loop in
    /// ``processWithoutCommit(_:simulated:)``; that loop remains for batches of devices with a timer floor
    /// (whether a later update is moved to the floor depends on whether an earlier one was accepted).
    private static func processLive<Updates: Collection>(_ batch: Updates, simulated: Bool, now: Double,
                                                         options: GeofencingOptions, core c: inout ServiceCore,
                                                         into result: inout BatchResult)
    where Updates.Element == LocationUpdate {
        let done: Void? = batch.withContiguousStorageIfAvailable { updates in
            processLive(updates, simulated: simulated, now: now, options: options, core: &c, into: &result)
        }
        if done == nil {
            Array(batch).withUnsafeBufferPointer { updates in
                processLive(updates, simulated: simulated, now: now, options: options, core: &c, into: &result)
            }
        }
    }

    /// ``processLive(_:simulated:now:options:core:into:)`` on the batch in place. The updates are read
    /// where they are, never copied, unless some are refused before the engine (then the others are
    /// gathered for it); and each device's bookkeeping costs one hash look-up per update, plus one per
    /// device and call for its arrival time (the same `now` for every update of the call).
    private static func processLive(_ updates: UnsafeBufferPointer<LocationUpdate>, simulated: Bool, now: Double,
                                    options: GeofencingOptions, core c: inout ServiceCore,
                                    into result: inout BatchResult) {
        let latestAccepted = now + options.maximumFutureSkew
        var refused: [BatchResult.Rejection] = []
        // When some update is refused: the others, and their positions in the batch.
        var accepted: [LocationUpdate] = []
        var positions: [Int] = []
        for index in updates.indices {
            guard let error = Self.refusalBeforeEngine(updates[index], latestAccepted: simulated ? nil : latestAccepted,
                                                       now: now, options: options, statistics: &c.timeStatistics) else {
                if !refused.isEmpty {
                    accepted.append(updates[index])
                    positions.append(index)
                }
                continue
            }
            if refused.isEmpty {
                accepted.reserveCapacity(updates.count - 1)
                positions.reserveCapacity(updates.count - 1)
                accepted.append(contentsOf: updates[..<index])
                positions.append(contentsOf: 0..<index)
            }
            refused.append(.init(index: index, error: error))
        }
        if refused.isEmpty {
            bookLive(updates, positions: nil, refused: [], now: now, core: &c, into: &result)
        } else {
            accepted.withUnsafeBufferPointer { accepted in
                bookLive(accepted, positions: positions, refused: refused, now: now, core: &c, into: &result)
            }
        }
    }

    /// Runs the `accepted` updates through the engine and does the bookkeeping in batch order:
    /// `positions[k]` is the batch position of `accepted[k]` (`nil`: the same), `refused` the updates
    /// refused before the engine, by position.
    private static func bookLive(_ accepted: UnsafeBufferPointer<LocationUpdate>, positions: [Int]?,
                                 refused: [BatchResult.Rejection], now: Double, core c: inout ServiceCore,
                                 into result: inout BatchResult) {
        let output = c.engine.process(accepted, advancingDevices: true)
        let timers = output.timerEventIndices, rejections = output.rejections
        var t = 0, r = 0, f = 0
        c.liveCalls += 1
        let call = c.liveCalls
        for k in accepted.indices {
            let index = positions?[k] ?? k
            while f < refused.count, refused[f].index < index {
                result.rejections.append(refused[f])
                f += 1
            }
            let timerFired = t < timers.count && timers[t] == k
            if timerFired { t += 1 }
            if r < rejections.count, rejections[r].index == k {
                result.rejections.append(.init(index: index, error: GeofencingError(rejections[r].rejection)))
                r += 1
                if timerFired { c.touch(accepted[k].device) }
            } else if c.arrive(accepted[k].device, call: call) {
                c.lastArrivals[accepted[k].device] = now
            }
        }
        result.rejections.append(contentsOf: refused[f...])
        c.log(output.events, into: &result.events)
    }

    /// Fires every dwell due by `time` for devices that sent no update since (their presence holds).
    ///
    /// - Returns: the dwell events, in log order (by time, then device, then fence).
    @discardableResult
    public func advance(to time: Date) throws(GeofencingError) -> [GeofencingEvent] {
        let (logged, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> ([GeofencingEvent], UInt64?) in
            _ = try c.configured()
            let due = c.engine.devicesWithDwellsDue(by: time)
            guard !due.isEmpty else { return ([], nil) }
            c.touch(due)
            var events: [GeofenceEvent] = []
            c.engine.advance(to: time, into: &events)
            var logged: [GeofencingEvent] = []
            c.log(events, into: &logged)
            return (logged, c.commitTicket())
        }
        return try finish(logged, ticket)
    }

    /// What the service knows about `device`. With the live time model its presence is as of the
    /// service's clock once the device has been quiet for the allowed lateness (the moment the clock
    /// fires its timers): a fence that expired by then is no longer listed, without a new fix.
    public func deviceStatus(of device: DeviceID) throws(GeofencingError) -> DeviceStatus {
        if relay != nil { return try relayedDeviceStatus(of: device) }
        let now = clock.now().timeIntervalSince1970
        return try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> DeviceStatus in
            let options = try c.configured()
            let watermark = now - options.allowedLateness
            let quiet = options.timeModel == .live && (c.lastArrivals[device] ?? -.infinity) <= watermark
            return DeviceStatus(device: device, lastUpdateTime: c.engine.lastUpdateTime(of: device),
                                presence: c.engine.presence(of: device, at: quiet ? Date(timeIntervalSince1970: watermark) : nil),
                                isConsentGiven: c.hasConsent(device, options: options))
        }
    }

    static func checkConsent<Updates: Collection>(_ batch: Updates, _ c: ServiceCore,
                                                          _ options: GeofencingOptions) throws(GeofencingError)
    where Updates.Element == LocationUpdate {
        guard c.serviceConsent else {
            throw GeofencingError(.consentMissing,
                                  "the user has not given consent to location processing; call setUserConsent(true) once they have. No update was processed or stored")
        }
        guard !c.deviceConsents.isEmpty || !options.consentByDefault else { return }
        for (index, update) in batch.enumerated() where !c.hasConsent(update.device, options: options) {
            throw GeofencingError(.consentMissing,
                                  "device \(update.device) (update \(index) of the batch) has no user consent; call setUserConsent(true, for: \"\(update.device)\") once given. No update of the batch was processed or stored",
                                  device: update.device)
        }
    }

    /// The refusal of an update dated more than `maximumFutureSkew` after `now` (live time model).
    static func futureUpdate(_ update: LocationUpdate, now: Double, options: GeofencingOptions) -> GeofencingError {
        let ahead = update.time.timeIntervalSince1970 - now
        return GeofencingError(
            .futureUpdate,
            "update of device \(update.device) is dated \(RFC3339.string(from: update.time)), \(seconds(ahead)) ahead of the service's clock (\(RFC3339.string(from: Date(timeIntervalSince1970: now)))); more than maximumFutureSkew (\(seconds(options.maximumFutureSkew))) allows. Is the device's clock wrong? The update was ignored and changed nothing",
            device: update.device)
    }

    /// Why `update` is refused before it reaches the engine, or `nil` when it goes on: dated after
    /// `latestAccepted` (the live clock plus ``GeofencingOptions/maximumFutureSkew``; `nil` when no such
    /// bound applies — the data-time model, or simulated updates), then too inaccurate. The live batch
    /// and the cluster relay refuse with this one rule; a refusal for the future is counted in
    /// `statistics`.
    static func refusalBeforeEngine(_ update: LocationUpdate, latestAccepted: Double?, now: Double,
                                    options: GeofencingOptions,
                                    statistics: inout TimeStatistics) -> GeofencingError? {
        if let latestAccepted, update.time.timeIntervalSince1970 > latestAccepted {
            statistics.futureUpdates += 1
            return futureUpdate(update, now: now, options: options)
        }
        return inaccurateLocation(update, maximum: options.maximumHorizontalAccuracy)
    }

    /// The refusal of an update whose horizontal accuracy is unknown to be within `maximum` metres
    /// (``GeofencingOptions/maximumHorizontalAccuracy``), or `nil` when it is accepted.
    static func inaccurateLocation(_ update: LocationUpdate, maximum: Double?) -> GeofencingError? {
        guard let maximum, let accuracy = update.horizontalAccuracy, !(accuracy >= 0 && accuracy <= maximum) else { return nil }
        return GeofencingError(
            .inaccurateLocation,
            "update of device \(update.device) reports a horizontal accuracy of \(accuracy) m, worse than maximumHorizontalAccuracy (\(maximum) m); it was ignored",
            device: update.device)
    }
}
