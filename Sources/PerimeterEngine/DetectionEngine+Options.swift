import Foundation
import PerimeterFences
import PerimeterGeometry

/// An event with the keys that order it within one update or one ``DetectionEngine/advance(to:into:)``.
struct KeyedEvent {
    var event: GeofenceEvent
    /// Within a group of the same time: reset/confirmations/timeouts/dwells, or exit/cross/entry/inside.
    var rank: Int

    static func chronological(_ a: KeyedEvent, _ b: KeyedEvent) -> Bool {
        (a.event.time, a.event.fence, a.rank) < (b.event.time, b.event.fence, b.rank)
    }

    static func byKind(_ a: KeyedEvent, _ b: KeyedEvent) -> Bool {
        (a.rank, a.event.time, a.event.fence) < (b.rank, b.event.time, b.event.fence)
    }
}

/// The general evaluation path, used once any fence (or the configuration) turns an option on.
/// With every option off it produces exactly the events of the default path (tested on random input).
extension DetectionEngine {
    /// The fence's options over the engine's.
    func resolvedOptions(_ fence: Fence) -> ResolvedOptions {
        ResolvedOptions(fence.options.merged(over: configuration.options))
    }

    /// Switches the engine to the general path (a fence with options was added).
    mutating func activateOptions() {
        guard !usesOptions else { return }
        usesOptions = true
        for d in devices.indices where optionStates[Int32(d)] == nil {
            var state = DeviceOptionsState()
            state.lastSequence = acceptedSequence
            state.anchor = devices[d].hasUpdates
                ? .init(time: devices[d].lastTime, coordinate: devices[d].lastCoordinate, accuracy: nil) : nil
            optionStates[Int32(d)] = state
        }
    }

    func freshOptionState(for state: DeviceState) -> DeviceOptionsState {
        var fresh = DeviceOptionsState()
        if state.updateCount > 0 {  // restored, or seen before options were switched on
            fresh.lastSequence = acceptedSequence
            fresh.anchor = .init(time: state.lastTime, coordinate: state.lastCoordinate, accuracy: nil)
        }
        return fresh
    }

    // MARK: - One update

    mutating func evaluateWithOptions(deviceSlot: Int32, time t: Double, coordinate c: Coordinate,
                                      accuracy: Double?, into events: inout [GeofenceEvent]) {
        let d = Int(deviceSlot)
        var state = takeState(d)
        var opt = optionStates.removeValue(forKey: deviceSlot) ?? freshOptionState(for: state)
        if !state.instantVisits.isEmpty {
            let earliest = opt.earliestVisitStart(after: state)
            state.instantVisits.removeAll { $0.entryTime < earliest }
        }

        var early: [KeyedEvent] = []
        runDue(&state, &opt, until: t, only: nil, coordinate: c, into: &early)

        fences.slots(containing: c, into: &scratch)
        let now = Array(scratch)
        var candidates = now + state.inside.map(\.slot) + opt.pending.map(\.slot)
        candidates.sort()
        var late: [KeyedEvent] = []
        var cancelled: Set<FenceSet.Slot> = []
        var previous: FenceSet.Slot = -1
        for slot in candidates where slot != previous {
            previous = slot
            observe(slot: slot, pointInside: now.contains(slot), state: &state, opt: &opt, time: t,
                    coordinate: c, accuracy: accuracy, cancelled: &cancelled, into: &late)
        }
        detectCrossings(state: &state, opt: opt, now: now, time: t, coordinate: c, accuracy: accuracy, into: &late)
        var held: [KeyedEvent] = []
        if !cancelled.isEmpty { runDue(&state, &opt, until: t, only: cancelled, coordinate: c, into: &held) }

        early.sort(by: KeyedEvent.chronological)
        late.sort(by: KeyedEvent.byKind)
        held.sort(by: KeyedEvent.chronological)
        for list in [early, late, held] { events.append(contentsOf: list.map(\.event)) }

        state.finish(time: t, coordinate: c)
        opt.anchor = .init(time: t, coordinate: c, accuracy: accuracy)
        opt.lastSequence = acceptedSequence
        store(state, at: d)
        scheduleNext(deviceSlot, state: state, opt: &opt)
        optionStates[deviceSlot] = opt
    }

    /// Step 2 and 3 for one fence: what this update shows, debounced, with initial trigger and level events.
    private mutating func observe(slot: FenceSet.Slot, pointInside: Bool, state: inout DeviceState,
                                  opt: inout DeviceOptionsState, time t: Double, coordinate c: Coordinate,
                                  accuracy: Double?, cancelled: inout Set<FenceSet.Slot>, into late: inout [KeyedEvent]) {
        let memberIndex = state.inside.firstIndex { $0.slot == slot }
        let pendingIndex = opt.pendingIndex(slot: slot)
        func dropSilently() {
            if let memberIndex { state.inside.remove(at: memberIndex) }
            if let pendingIndex { opt.pending.remove(at: pendingIndex) }
        }
        guard let fence = fences[slot: slot], !isExpired(fence, at: t) else { return dropSilently() }
        let o = resolvedOptions(fence)
        if let schedule = o.schedule, !schedule.isActive(at: t) { return dropSilently() }
        let wasMember = memberIndex != nil

        // What this fix says: inside, outside, or nothing (ambiguous or too inaccurate).
        var observed: Bool?
        if o.accepts(accuracy: accuracy) {
            let r = o.uncertainty(accuracy: accuracy)
            if r > 0 {
                let disc = SegmentGeometry.disc(c, radius: r, in: fence.region)
                observed = disc.inside ? true : (disc.outside ? false : nil)
            } else {
                observed = pointInside
            }
        }
        func level() {
            guard o.initialTrigger == .inside, let i = state.inside.firstIndex(where: { $0.slot == slot }) else { return }
            emit(.inside, fence: fence, state: state, membership: state.inside[i], time: t, coordinate: c,
                 rank: 3, extra: Self.levelEventKey(c), into: &late)
        }
        guard let target = observed else { return wasMember ? level() : () }
        if target == wasMember {
            if let pendingIndex {
                opt.pending.remove(at: pendingIndex)
                cancelled.insert(slot)
            }
            return wasMember ? level() : ()
        }
        // Initial trigger: the device's first evaluation against this fence finds it inside.
        if !wasMember, o.initialTrigger != .entry,
           state.updateCount == 0 || (fenceAddedAt[slot] ?? 0) > opt.lastSequence {
            if let pendingIndex { opt.pending.remove(at: pendingIndex) }
            insert(Membership(slot: slot, entryTime: t, visitSequence: state.updateCount,
                              ordinal: state.ordinal(ofVisitTo: slot, at: t)), into: &state)
            level()
            return
        }
        if let pendingIndex, opt.pending[pendingIndex].toInside == target { return wasMember ? level() : () }

        var since = t, where_ = c
        if o.interpolate, let a = opt.anchor, a.time < t, t - a.time <= o.maximumGap, o.accepts(accuracy: a.accuracy),
           pointInside == target, fence.contains(a.coordinate) != pointInside {
            let intervals = SegmentGeometry.insideIntervals(of: fence.region, from: a.coordinate, to: c)
            let u = target ? intervals.last(where: { $0.end >= 1 - 1e-12 })?.start
                           : intervals.first(where: { $0.start <= 1e-12 })?.end
            if let u {
                since = a.time + u * (t - a.time)
                where_ = SegmentGeometry.point(a.coordinate, c, at: u)
            }
        }
        let delay = target ? o.entryDelay : o.exitDelay
        let pending = DeviceOptionsState.Pending(slot: slot, toInside: target, since: since, observedAt: t,
                                                 coordinate: where_, sequence: state.updateCount)
        if since + delay <= t {
            confirm(pending, fence: fence, state: &state, opt: &opt, rank: target ? 2 : 0, into: &late)
        } else {
            opt.pending.append(pending)
            if wasMember { level() }
        }
    }

    /// Applies a confirmed transition: a new visit (entry) or the end of one (exit).
    private mutating func confirm(_ p: DeviceOptionsState.Pending, fence: Fence, state: inout DeviceState,
                                  opt: inout DeviceOptionsState, rank: Int, into list: inout [KeyedEvent]) {
        if p.toInside {
            let m = Membership(slot: p.slot, entryTime: p.since, visitSequence: p.sequence,
                               ordinal: state.ordinal(ofVisitTo: p.slot, at: p.since))
            insert(m, into: &state)
            emit(.entry, fence: fence, state: state, membership: m, time: p.since, coordinate: p.coordinate,
                 rank: rank, observedAt: p.observedAt, into: &list)
        } else if let i = state.inside.firstIndex(where: { $0.slot == p.slot }) {
            let m = state.inside.remove(at: i)
            opt.dwellRepeats[p.slot] = nil
            if p.since == m.entryTime { state.noteInstantVisit(m, keepingFrom: opt.earliestVisitStart(after: state)) }
            emit(.exit, fence: fence, state: state, membership: m, time: p.since, coordinate: p.coordinate,
                 rank: rank, observedAt: p.observedAt, timeInside: p.since - m.entryTime, into: &list)
        }
    }

    private func insert(_ m: Membership, into state: inout DeviceState) {
        let at = state.inside.firstIndex { $0.slot > m.slot } ?? state.inside.count
        state.inside.insert(m, at: at)
    }

    // MARK: - Crossings

    /// `cross` events for fences the straight path from the last update to this one passed through.
    private mutating func detectCrossings(state: inout DeviceState, opt: DeviceOptionsState, now: [FenceSet.Slot],
                                          time t: Double, coordinate c: Coordinate, accuracy: Double?,
                                          into late: inout [KeyedEvent]) {
        guard let a = opt.anchor, a.time <= t else { return }
        if crossingCandidates == nil { buildCrossingCandidates() }
        guard let candidates = crossingCandidates, !candidates.isEmpty else { return }
        let box = SegmentBox(a.coordinate, c)
        for (slot, boxes) in candidates where box.meets(boxes) {
            guard !now.contains(slot), !state.inside.contains(where: { $0.slot == slot }),
                  !opt.pending.contains(where: { $0.slot == slot }),
                  let fence = fences[slot: slot], !isExpired(fence, at: t) else { continue }
            let o = resolvedOptions(fence)
            guard o.crossings, t - a.time <= o.maximumGap, o.accepts(accuracy: accuracy), o.accepts(accuracy: a.accuracy),
                  o.schedule?.isActive(at: t) ?? true, !fence.contains(a.coordinate) else { continue }
            let intervals = SegmentGeometry.insideIntervals(of: fence.region, from: a.coordinate, to: c)
            guard let first = intervals.first else { continue }
            let span = t - a.time
            let when = a.time + first.start * span
            // A crossing is a visit that begins and ends at `when`: numbered like one.
            let m = Membership(slot: slot, entryTime: when, visitSequence: state.updateCount,
                               ordinal: state.ordinal(ofVisitTo: slot, at: when))
            emit(.cross, fence: fence, state: state, membership: m, time: when,
                 coordinate: SegmentGeometry.point(a.coordinate, c, at: first.start), rank: 1, observedAt: t,
                 timeInside: intervals.reduce(0) { $0 + ($1.end - $1.start) } * span, into: &late)
            state.noteInstantVisit(m, keepingFrom: opt.earliestVisitStart(after: state))
        }
    }

    /// Slots of fences that may report crossings, with their bounding boxes.
    mutating func buildCrossingCandidates() {
        var list: [(FenceSet.Slot, [BoundingBox])] = []
        for fence in fences.fences where resolvedOptions(fence).crossings {
            guard let slot = fences.slot(of: fence.id) else { continue }
            list.append((slot, fence.region.boundingBoxes))
        }
        crossingCandidates = list
    }

    // MARK: - Things that fall due

    private enum DueAction {
        case reset(Int), confirm(Int), dropPending(Int), timeout(Int), dwell(Int)
    }

    /// Fires, in time order, everything of this device due by `limit`: schedule resets, debounce
    /// confirmations, staleness timeouts and dwells (`only`: just the dwells of these fences).
    mutating func runDue(_ state: inout DeviceState, _ opt: inout DeviceOptionsState, until limit: Double,
                         only: Set<FenceSet.Slot>?, coordinate: Coordinate, into list: inout [KeyedEvent]) {
        while true {
            var best: (due: Double, rank: Int, fence: FenceID, action: DueAction)?
            func consider(_ due: Double, _ rank: Int, _ fence: FenceID, _ action: DueAction) {
                guard due <= limit else { return }
                if let b = best, (b.due, b.rank, b.fence) <= (due, rank, fence) { return }
                best = (due, rank, fence, action)
            }
            if only == nil {
                for (i, p) in opt.pending.enumerated() {
                    guard let fence = fences[slot: p.slot] else { continue }
                    let o = resolvedOptions(fence)
                    let due = p.since + (p.toInside ? o.entryDelay : o.exitDelay)
                    if let s = o.staleAfter, state.lastTime + s <= due {
                        consider(state.lastTime + s, 1, fence.id, .dropPending(i))
                    } else {
                        consider(due, 1, fence.id, .confirm(i))
                    }
                }
            }
            for (i, m) in state.inside.enumerated() {
                guard let fence = fences[slot: m.slot] else { continue }
                if let only, !only.contains(m.slot) { continue }
                let o = resolvedOptions(fence)
                if only == nil, let schedule = o.schedule {
                    consider(schedule.activeUntil(m.entryTime), 0, fence.id, .reset(i))
                }
                if only == nil, let s = o.staleAfter, o.exitOnStale {
                    consider(state.lastTime + s, 2, fence.id, .timeout(i))
                }
                guard let w = dwellTime(of: fence) else { continue }
                let due: Double
                if !m.hasDwelled {
                    due = m.entryTime + w
                } else if o.dwellEvery > 0 {
                    due = m.entryTime + w + o.dwellEvery * Double(opt.repeats(slot: m.slot, visit: m.visitSequence) + 1)
                } else { continue }
                if let p = opt.pending.first(where: { $0.slot == m.slot }), !p.toInside, p.since <= due { continue }
                consider(due, 3, fence.id, .dwell(i))
            }
            guard let next = best else { return }
            switch next.action {
            case .reset(let i):
                let m = state.inside.remove(at: i)
                opt.pending.removeAll { $0.slot == m.slot }
                opt.dwellRepeats[m.slot] = nil
            case .confirm(let i):
                let p = opt.pending.remove(at: i)
                if let fence = fences[slot: p.slot], !isExpired(fence, at: p.since) {
                    confirm(p, fence: fence, state: &state, opt: &opt, rank: 1, into: &list)
                }
            case .dropPending(let i):
                opt.pending.remove(at: i)
            case .timeout(let i):
                let m = state.inside.remove(at: i)
                opt.pending.removeAll { $0.slot == m.slot }
                opt.dwellRepeats[m.slot] = nil
                if next.due == m.entryTime { state.noteInstantVisit(m, keepingFrom: opt.earliestVisitStart(after: state)) }
                if let fence = fences[slot: m.slot] {
                    emit(.exit, fence: fence, state: state, membership: m, time: next.due,
                         coordinate: state.lastCoordinate, rank: 2, timeInside: next.due - m.entryTime,
                         reason: .timeout, into: &list)
                }
            case .dwell(let i):
                let m = state.inside[i]
                guard let fence = fences[slot: m.slot], let w = dwellTime(of: fence) else { continue }
                let o = resolvedOptions(fence)
                let count = opt.repeats(slot: m.slot, visit: m.visitSequence)
                let silent = isExpired(fence, at: next.due) || o.staleAfter.map { next.due >= state.lastTime + $0 } == true
                if !silent {
                    emit(.dwell, fence: fence, state: state, membership: m, time: next.due, coordinate: coordinate,
                         rank: 3, extra: m.hasDwelled ? UInt64(count + 1) : nil, into: &list)
                }
                var fired = m.hasDwelled ? count + 1 : 0
                if silent, o.dwellEvery > 0 {  // skip the whole silent stretch at once
                    let skipped = Int(((limit - (m.entryTime + w)) / o.dwellEvery).rounded(.down))
                    fired = max(fired, min(skipped, Int(Int32.max)))
                }
                state.inside[i].hasDwelled = true
                if fired > 0 { opt.dwellRepeats[m.slot] = (m.visitSequence, fired) }
            }
        }
    }

    /// The earliest moment something of this device may fall due (`.infinity` for nothing).
    private func nextDue(_ state: DeviceState, _ opt: DeviceOptionsState) -> Double {
        var due = Double.infinity
        for p in opt.pending {
            guard let fence = fences[slot: p.slot] else { continue }
            let o = resolvedOptions(fence)
            due = min(due, p.since + (p.toInside ? o.entryDelay : o.exitDelay))
            if let s = o.staleAfter { due = min(due, state.lastTime + s) }
        }
        for m in state.inside {
            guard let fence = fences[slot: m.slot] else { continue }
            let o = resolvedOptions(fence)
            if let schedule = o.schedule { due = min(due, schedule.activeUntil(m.entryTime)) }
            if let s = o.staleAfter, o.exitOnStale { due = min(due, state.lastTime + s) }
            if let w = dwellTime(of: fence) {
                if !m.hasDwelled {
                    due = min(due, m.entryTime + w)
                } else if o.dwellEvery > 0 {
                    due = min(due, m.entryTime + w + o.dwellEvery * Double(opt.repeats(slot: m.slot, visit: m.visitSequence) + 1))
                }
            }
        }
        return due
    }

    /// Makes sure an option timer will wake this device when something falls due.
    mutating func scheduleNext(_ device: Int32, state: DeviceState, opt: inout DeviceOptionsState) {
        let due = nextDue(state, opt)
        guard due.isFinite else { return }
        if let scheduled = opt.scheduledDue, scheduled <= due { return }
        opt.scheduledDue = due
        optionTimers.push(DeviceTimer(due: due, device: device))
    }

    /// The option path of ``advance(to:holding:into:)``: everything due by `now`, for every device not
    /// `held` (their timers stay pending).
    mutating func advanceWithOptions(to now: Double, holding held: Set<Int32>, into events: inout [GeofenceEvent]) {
        var due = Set<Int32>()
        var keptOptionTimers: [DeviceTimer] = [], keptDwellTimers: [DwellTimer] = []
        while let first = optionTimers.first, first.due <= now, let timer = optionTimers.pop() {
            if held.contains(timer.device) { keptOptionTimers.append(timer); continue }
            if optionStates[timer.device]?.scheduledDue == timer.due { optionStates[timer.device]?.scheduledDue = nil }
            due.insert(timer.device)
        }
        while let timer = timers.popFirst(dueBy: now) {
            if held.contains(timer.device) { keptDwellTimers.append(timer) } else { due.insert(timer.device) }
        }
        for timer in keptOptionTimers { optionTimers.push(timer) }
        for timer in keptDwellTimers { timers.push(timer) }
        var list: [KeyedEvent] = []
        for device in due {
            let d = Int(device)
            var state = takeState(d)
            var opt = optionStates.removeValue(forKey: device) ?? freshOptionState(for: state)
            runDue(&state, &opt, until: now, only: nil, coordinate: state.lastCoordinate, into: &list)
            store(state, at: d)
            scheduleNext(device, state: state, opt: &opt)
            optionStates[device] = opt
        }
        list.sort {
            ($0.event.time, $0.event.device, $0.event.fence, $0.rank) < ($1.event.time, $1.event.device, $1.event.fence, $1.rank)
        }
        events.append(contentsOf: list.map(\.event))
    }

    // MARK: - Events

    /// What tells apart the level events of one visit at one instant: the position. A repeated update
    /// repeats its level events with their ids (the same fact, reported again), not by a count that
    /// depends on the device's history.
    static func levelEventKey(_ c: Coordinate) -> UInt64 {
        var hash = StableHash()
        hash.combine(c.latitude)
        hash.combine(c.longitude)
        return hash.word
    }

    /// Appends an event if the fence reports its kind, and counts it.
    private mutating func emit(_ kind: GeofenceEventKind, fence: Fence, state: DeviceState, membership m: Membership,
                               time: Double, coordinate: Coordinate, rank: Int, observedAt: Double? = nil,
                               timeInside: Double? = nil, reason: ExitReason = .left, extra: UInt64? = nil,
                               into list: inout [KeyedEvent]) {
        guard fence.events.contains(kind) else { return }
        switch kind {
        case .entry: statistics.entries += 1
        case .dwell: statistics.dwells += 1
        case .exit: statistics.exits += 1
        case .cross: statistics.crosses += 1
        case .inside: statistics.insides += 1
        }
        let event = makeEvent(kind, fence: fence.id, device: state.id, membership: m, time: time, coordinate: coordinate,
                              timeInside: timeInside, observedAt: observedAt, reason: reason, extra: extra)
        list.append(KeyedEvent(event: event, rank: rank))
    }
}

/// The lon/lat box of a segment (the short way round), for a cheap test against fence boxes.
struct SegmentBox {
    var minLongitude, maxLongitude, minLatitude, maxLatitude: Double

    init(_ a: Coordinate, _ b: Coordinate) {
        let bx = b.longitude + 360 * ((a.longitude - b.longitude) / 360).rounded()
        minLongitude = min(a.longitude, bx)
        maxLongitude = max(a.longitude, bx)
        minLatitude = min(a.latitude, b.latitude)
        maxLatitude = max(a.latitude, b.latitude)
    }

    func meets(_ boxes: [BoundingBox]) -> Bool {
        boxes.contains { box in
            guard box.minLatitude <= maxLatitude, box.maxLatitude >= minLatitude else { return false }
            return [-360.0, 0, 360].contains { shift in
                box.minLongitude + shift <= maxLongitude && box.maxLongitude + shift >= minLongitude
            }
        }
    }
}
