import Foundation
import PerimeterEngine

/// Live time (docs/semantics.md, "Time in the live service"): the service's clock fires timers, each
/// device's updates move only its own time, and devices can be forgotten.
extension GeofencingService {
    /// Counters of the live time model since the service was configured.
    public struct TimeStatistics: Hashable, Sendable {
        /// Updates refused because they were dated too far ahead of the service's clock.
        public var futureUpdates: UInt64 = 0
        /// Updates dated before a timer the clock had already fired for their device, evaluated as of
        /// that timer's time.
        public var lateUpdates: UInt64 = 0
        /// Events the clock fired without a new fix (dwells, confirmations, staleness exits, …).
        public var clockEvents: UInt64 = 0

        /// Zero counters.
        public init() {}
    }

    /// The live time model's counters since the service was configured.
    public var timeStatistics: TimeStatistics { core.withLock { $0.timeStatistics } }

    /// Fires, on the service's clock, every timer that fell due: with the clock at *now* and allowed
    /// lateness *L*, each timer due by *now − L* of every device that sent nothing for *L* seconds.
    /// Devices still sending (a backlog uploaded in several requests) are left to their own updates.
    ///
    /// The service calls this itself every `tickInterval` seconds; call it when you created the service
    /// with `tickInterval: nil`. Does nothing with the data time model or before ``configure(_:)``.
    /// - Returns: the events fired, in log order (by time, then device, then fence).
    /// - Complexity: O(d log n) for d timers due among n pending; O(a) every *L* seconds to prune the
    ///   a devices heard from recently.
    @discardableResult
    public func tick() throws(GeofencingError) -> [GeofencingEvent] {
        let now = clock.now().timeIntervalSince1970
        let (logged, ticket) = core.withLock { (c: inout ServiceCore) -> ([GeofencingEvent], UInt64?) in
            guard let options = c.options, options.timeModel == .live else { return ([], nil) }
            let watermark = now - options.allowedLateness
            if now - c.lastArrivalsPruned >= max(options.allowedLateness, 1) {
                c.lastArrivals = c.lastArrivals.filter { $0.value > watermark }
                c.lastArrivalsPruned = now
            }
            let due = c.engine.devicesWithDwellsDue(by: Date(timeIntervalSince1970: watermark))
            guard !due.isEmpty else { return ([], nil) }
            let held = Set(due.filter { (c.lastArrivals[$0] ?? -.infinity) > watermark })
            guard held.count < due.count else { return ([], nil) }
            c.touch(due.filter { !held.contains($0) })
            var events: [GeofenceEvent] = []
            c.engine.advance(to: Date(timeIntervalSince1970: watermark), holding: held, into: &events)
            for event in events {
                let time = event.time.timeIntervalSince1970
                if time > c.timerFloors[event.device] ?? -.infinity { c.timerFloors[event.device] = time }
            }
            c.timeStatistics.clockEvents += UInt64(events.count)
            var logged: [GeofencingEvent] = []
            c.log(events, into: &logged)
            return (logged, logged.isEmpty ? nil : c.commitTicket())
        }
        return try finish(logged, ticket)
    }

    /// Fires the timers of `device` alone that fall due by `time`, as if the device had stayed where it
    /// last reported until then: how a simulation, whose device runs on a clock of its own, lets its
    /// time pass without a fix. No other device's time moves.
    /// - Returns: the events, in log order.
    @discardableResult
    public func advance(_ device: DeviceID, to time: Date) throws(GeofencingError) -> [GeofencingEvent] {
        let (logged, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> ([GeofencingEvent], UInt64?) in
            _ = try c.configured()
            var events: [GeofenceEvent] = []
            c.engine.advance(device, to: time, into: &events)
            guard !events.isEmpty else { return ([], nil) }
            c.touch(device)
            var logged: [GeofencingEvent] = []
            c.log(events, into: &logged)
            return (logged, c.commitTicket())
        }
        return try finish(logged, ticket)
    }

    /// Processes updates of a simulated device like ``process(_:)-(Array)``, except that their times are
    /// their own: with the live time model they are never refused as future-dated, because a simulation
    /// may run faster than real time. They move no other device's time.
    @discardableResult
    public func processSimulated(_ batch: [LocationUpdate]) throws(GeofencingError) -> BatchResult {
        try processBatch(batch[...], simulated: true)
    }

    /// Forgets `device`: drops its presence, pending timers, option state and updates waiting in a
    /// reorder window, in memory and in the store. Its next update starts afresh, as a device never
    /// seen (an entry for every fence it is then inside). Its consent setting is kept.
    ///
    /// With `emittingExits`, first logs an exit with reason ``ExitReason/reset`` from every fence the
    /// device is inside (that reports exits), dated by the service's clock with the live time model, or
    /// at the device's last update with the data clock — never before its last update.
    /// - Returns: the exits logged (empty without `emittingExits`).
    /// - Throws: ``GeofencingError/Code/deviceNotFound`` when the service knows no such device;
    ///   ``GeofencingError/Code/storageFailure``; ``GeofencingError/Code/notConfigured``.
    @discardableResult
    public func forget(device: DeviceID, emittingExits: Bool = false) throws(GeofencingError) -> [GeofencingEvent] {
        if relay != nil {
            throw GeofencingError(.invalidArgument, "device \"\(device)\" cannot be forgotten through an API node of a cluster: its state is held by the worker that owns its partition")
        }
        let now = clock.now()
        let (logged, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> ([GeofencingEvent], UInt64?) in
            let options = try c.configured()
            var events: [GeofenceEvent] = []
            let exitTime = emittingExits ? (options.timeModel == .live ? now : .distantPast) : nil
            guard c.engine.forget(device, exitsAt: exitTime, into: &events) else {
                throw GeofencingError(.deviceNotFound, "no device \"\(device)\" is known: it sent no update, or was forgotten already",
                                      device: device)
            }
            c.pending.forgotten.append(device)
            if let number = c.books.existingNumber(of: device) { c.books.committed[Int(number)] = nil }
            c.lastArrivals.removeValue(forKey: device)
            c.timerFloors.removeValue(forKey: device)
            var logged: [GeofencingEvent] = []
            c.log(events, into: &logged)
            return (logged, c.commitTicket(force: true))
        }
        return try finish(logged, ticket)
    }

    /// Commits through `ticket` (when one is due), tells the observers, and returns `logged`.
    func finish(_ logged: [GeofencingEvent], _ ticket: UInt64?) throws(GeofencingError) -> [GeofencingEvent] {
        let failure = ticket.flatMap(commit(through:))
        notify(events: logged, errors: failure.map { [$0] } ?? [])
        if let failure { throw failure }
        return logged
    }

    /// A duration for messages: "90 s", "2.5 h", "74 years".
    static func seconds(_ value: Double) -> String {
        let magnitude = abs(value)
        func format(_ number: Double) -> String {
            // Past 1e15 an Int conversion could trap (an update dated 1e300 s); three digits say enough.
            guard abs(number) < 1e15 else { return String(format: "%.3g", number) }
            return number.rounded() == number || number >= 100 ? String(Int(number.rounded())) : String(format: "%.1f", number)
        }
        switch magnitude {
        case ..<120: return "\(format(value)) s"
        case ..<7200: return "\(format(value / 60)) min"
        case ..<(2 * 86400): return "\(format(value / 3600)) h"
        case ..<(2 * 365.25 * 86400): return "\(format(value / 86400)) days"
        default: return "\(format(value / (365.25 * 86400))) years"
        }
    }
}
