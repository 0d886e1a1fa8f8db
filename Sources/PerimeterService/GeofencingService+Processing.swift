import Foundation
import PerimeterEngine

extension GeofencingService {
    /// Processes one update.
    ///
    /// - Returns: the events it caused, in log order.
    /// - Throws: ``GeofencingError/Code/consentMissing`` (nothing processed or stored),
    ///   ``GeofencingError/Code/outOfOrderUpdate``, ``GeofencingError/Code/invalidLocation`` or
    ///   ``GeofencingError/Code/inaccurateLocation`` for a rejected update (it still counts as consumed),
    ///   ``GeofencingError/Code/storageFailure``, ``GeofencingError/Code/notConfigured``.
    @discardableResult
    public func process(_ update: LocationUpdate) throws(GeofencingError) -> [LoggedEvent] {
        let result = try process(CollectionOfOne(update)[...])
        if let rejection = result.rejections.first { throw rejection.error }
        return result.events
    }

    /// Processes a batch of updates in order, committing once (group commit).
    ///
    /// Each update first advances the clock to its time when ``GeofencingOptions/advancesClockWithUpdates``
    /// is set. Rejected updates are reported in the result (and to observers' `onError`); they change no
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

    private func processBatch<Updates: Collection>(_ batch: Updates) throws(GeofencingError) -> BatchResult
    where Updates.Element == LocationUpdate {
        let (result, ticket, lockedFailure) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> (BatchResult, UInt64?, GeofencingError?) in
            let options = try c.configured()
            try Self.checkConsent(batch, c, options)
            var result = BatchResult()
            var events: [GeofenceEvent] = []
            let maximumAccuracy = options.maximumHorizontalAccuracy
            for (index, update) in batch.enumerated() {
                if options.advancesClockWithUpdates {
                    let due = c.engine.devicesWithDwellsDue(by: update.time)
                    if !due.isEmpty {
                        c.pending.touch(due)
                        c.engine.advance(to: update.time, into: &events)
                    }
                }
                if let maximumAccuracy, let accuracy = update.horizontalAccuracy, !(accuracy >= 0 && accuracy <= maximumAccuracy) {
                    result.rejections.append(.init(index: index, error: GeofencingError(
                        .inaccurateLocation,
                        "update of device \(update.device) reports a horizontal accuracy of \(accuracy) m, worse than maximumHorizontalAccuracy (\(maximumAccuracy) m); it was ignored",
                        device: update.device)))
                    continue
                }
                if let rejection = c.engine.process(update, into: &events) {
                    result.rejections.append(.init(index: index, error: GeofencingError(rejection)))
                } else {
                    c.pending.touch(update.device)
                }
            }
            c.log(events, into: &result.events)
            c.processedUpdates += UInt64(batch.count)
            c.pending.processedUpdatesChanged = true
            c.pending.updates += batch.count
            // Every-call durability commits after the lock is released once, so that calls made
            // meanwhile by other threads join the same commit (see `commitShared`).
            if case .everyCall = options.durability { return (result, c.commitGeneration, nil) }
            return (result, nil, c.commitIfDue(store))
        }
        let failure = ticket.map(commitShared) ?? lockedFailure
        notify(events: result.events, errors: result.rejections.map(\.error) + (failure.map { [$0] } ?? []))
        if let failure { throw failure }
        return result
    }

    /// Commits the changes made while the commit generation was `ticket`, unless a commit (by any
    /// thread) already stored them.
    ///
    /// The committing thread first yields the processor once, then a few more rounds while other
    /// threads wait for the lock (most likely to process their own updates), so that they go first and
    /// join its commit: one transaction then stores several callers' changes, and each of them finds
    /// its changes stored and returns without a transaction (PostgreSQL's `commit_delay` with
    /// `commit_siblings`, without a timed sleep). Measured with wrk, 16 connections, one core: 0.13×
    /// `/healthz` with a commit per request, 0.2–0.3× shared.
    /// - Returns: the commit's error, if this call committed and the commit failed (the changes stay
    ///   pending for the next commit).
    private func commitShared(_ ticket: UInt64) -> GeofencingError? {
        var rounds = 0
        while true {
            let outcome = core.withLock { (c: inout ServiceCore) -> GeofencingError?? in
                guard c.commitGeneration == ticket else { return .some(nil) }
                // Yield once in any case (threads that are runnable but not yet at the lock, e.g. on
                // the same core, get to process first), then while others wait for the lock.
                if rounds == 0 || (rounds < Self.commitDelayRounds && core.hasWaiters) { return nil }
                return .some(c.commitIfDue(store, force: true))
            }
            if let outcome { return outcome }
            rounds += 1
            sched_yield()
        }
    }

    /// How many times a shared commit lets waiting threads go first.
    private static let commitDelayRounds = 4

    /// Fires every dwell due by `time` for devices that sent no update since (their presence holds).
    ///
    /// - Returns: the dwell events, in log order (by time, then device, then fence).
    @discardableResult
    public func advance(to time: Date) throws(GeofencingError) -> [LoggedEvent] {
        let (logged, failure) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> ([LoggedEvent], GeofencingError?) in
            _ = try c.configured()
            let due = c.engine.devicesWithDwellsDue(by: time)
            guard !due.isEmpty else { return ([], nil) }
            c.pending.touch(due)
            var events: [GeofenceEvent] = []
            c.engine.advance(to: time, into: &events)
            var logged: [LoggedEvent] = []
            c.log(events, into: &logged)
            return (logged, c.commitIfDue(store))
        }
        notify(events: logged, errors: failure.map { [$0] } ?? [])
        if let failure { throw failure }
        return logged
    }

    /// What the service knows about `device`.
    public func deviceStatus(of device: DeviceID) throws(GeofencingError) -> DeviceStatus {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> DeviceStatus in
            let options = try c.configured()
            return DeviceStatus(device: device, lastUpdateTime: c.engine.lastUpdateTime(of: device),
                                presence: c.engine.presence(of: device),
                                isConsentGiven: c.hasConsent(device, options: options))
        }
    }

    private static func checkConsent<Updates: Collection>(_ batch: Updates, _ c: ServiceCore,
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
}
