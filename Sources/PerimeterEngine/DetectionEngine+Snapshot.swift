import Foundation
import PerimeterFences
import PerimeterGeometry

extension DetectionEngine {
    /// One device's complete state, by fence id: what a store persists so that an engine rebuilt from it
    /// continues exactly as the original would have (same events, same event and visit ids).
    ///
    /// Presence is always there; ``options`` and ``stream`` only when the engine uses detection options
    /// or the stream options (reorder window, duplicate suppression). Times are the engine's own
    /// representation (seconds since 1970 as `Double`), so they round-trip bit for bit.
    public struct DeviceSnapshot: Hashable, Sendable {
        /// The device.
        public var device: DeviceID
        /// Time of the last accepted update, in seconds since 1970.
        public var lastTime: Double
        /// Position of the last accepted update.
        public var lastCoordinate: Coordinate
        /// Number of accepted updates so far.
        public var updateCount: UInt64
        /// The fences the device is inside, ordered by fence id.
        public var memberships: [MembershipSnapshot]
        /// Visits (and crossings) that began and ended at one instant, the latest per fence, ordered by
        /// fence id: a visit beginning again at that instant is numbered after it. Almost always empty.
        public var instantVisits: [InstantVisitSnapshot]
        /// The detection options' extra state, when the engine uses options.
        public var options: DeviceOptionSnapshot?
        /// The reorder buffer and recent update identities, when the engine uses stream options.
        public var stream: DeviceStreamSnapshot?

        /// Creates a snapshot.
        public init(device: DeviceID, lastTime: Double, lastCoordinate: Coordinate, updateCount: UInt64,
                    memberships: [MembershipSnapshot], instantVisits: [InstantVisitSnapshot] = [],
                    options: DeviceOptionSnapshot? = nil, stream: DeviceStreamSnapshot? = nil) {
            self.device = device
            self.lastTime = lastTime
            self.lastCoordinate = lastCoordinate
            self.updateCount = updateCount
            self.memberships = memberships
            self.instantVisits = instantVisits
            self.options = options
            self.stream = stream
        }
    }

    /// That a device is inside a fence, as the engine tracks it.
    public struct MembershipSnapshot: Hashable, Sendable {
        /// The fence.
        public var fence: FenceID
        /// Entry time in seconds since 1970.
        public var entryTime: Double
        /// The device's update count at entry: tells this visit's dwell timers and repeated-dwell count
        /// from an earlier visit's (not part of the visit id).
        public var visitSequence: UInt64
        /// Which visit of this fence beginning at ``entryTime`` this is (0: the first), part of the
        /// visit id; `nil` for a visit recorded before ids were derived this way, whose id is derived
        /// from ``visitSequence`` as it was then (docs/semantics.md, "Event and visit ids").
        public var ordinal: UInt32?
        /// Whether the visit's dwell has fallen due (fired, or passed silently).
        public var hasDwelled: Bool

        /// Creates a membership snapshot.
        public init(fence: FenceID, entryTime: Double, visitSequence: UInt64, ordinal: UInt32? = 0, hasDwelled: Bool) {
            self.fence = fence
            self.entryTime = entryTime
            self.visitSequence = visitSequence
            self.ordinal = ordinal
            self.hasDwelled = hasDwelled
        }
    }

    /// A visit (or crossing) that began and ended at the same instant; see ``DeviceSnapshot/instantVisits``.
    public struct InstantVisitSnapshot: Hashable, Sendable {
        /// The fence.
        public var fence: FenceID
        /// The instant, in seconds since 1970.
        public var entryTime: Double
        /// Which visit of the fence beginning at that instant it was (0: the first).
        public var ordinal: UInt32

        /// Creates an instant-visit snapshot.
        public init(fence: FenceID, entryTime: Double, ordinal: UInt32) {
            self.fence = fence
            self.entryTime = entryTime
            self.ordinal = ordinal
        }
    }

    /// Why ``restore(_:)`` refused a snapshot.
    public enum RestoreError: Error, Hashable, Sendable, CustomStringConvertible {
        /// The engine has already seen updates; restore only into a fresh engine.
        case engineNotEmpty
        /// The same device appears twice.
        case duplicateDevice(DeviceID)
        /// A membership names a fence the engine does not watch.
        case unknownFence(device: DeviceID, fence: FenceID)
        /// A time is not finite, or a device is inside the same fence twice.
        case inconsistent(device: DeviceID, reason: String)

        public var description: String {
            switch self {
            case .engineNotEmpty:
                "cannot restore devices into an engine that has already processed updates"
            case .duplicateDevice(let device):
                "device \(device) appears twice in the snapshot"
            case let .unknownFence(device, fence):
                "device \(device) is recorded inside fence \(fence), which is not loaded"
            case let .inconsistent(device, reason):
                "the state of device \(device) is inconsistent: \(reason)"
            }
        }
    }

    /// The state of `device`, or `nil` when it sent no accepted update.
    ///
    /// Memberships in fences that were removed since are left out (the engine drops them silently).
    /// - Complexity: O(k log k) for the k fences the device is inside.
    public func snapshot(of device: DeviceID) -> DeviceSnapshot? {
        guard let slot = slot(of: device) else { return nil }
        return snapshot(slot: slot)
    }

    /// Every device's state, in order of first update (forgotten devices left out).
    public var deviceSnapshots: [DeviceSnapshot] {
        devices.indices.filter { isLive(slot: Int32($0)) }.map { snapshot(slot: Int32($0)) }
    }

    /// The memberships by fence id, ascending (those of fences no longer known left out).
    func membershipSnapshots(of inside: [Membership]) -> [MembershipSnapshot] {
        var memberships: [MembershipSnapshot] = []
        memberships.reserveCapacity(inside.count)
        for m in inside {
            guard let fence = fences.id(ofSlot: m.slot) else { continue }
            memberships.append(MembershipSnapshot(fence: fence, entryTime: m.entryTime, visitSequence: m.visitSequence,
                                                  ordinal: m.hasLegacyID ? nil : m.ordinal, hasDwelled: m.hasDwelled))
        }
        memberships.sort { $0.fence < $1.fence }
        return memberships
    }

    /// The instant visits by fence id, ascending (those of fences no longer known left out).
    func instantVisitSnapshots(of visits: [InstantVisit]) -> [InstantVisitSnapshot] {
        var snapshots: [InstantVisitSnapshot] = []
        for visit in visits {
            guard let fence = fences.id(ofSlot: visit.slot) else { continue }
            snapshots.append(InstantVisitSnapshot(fence: fence, entryTime: visit.entryTime, ordinal: visit.ordinal))
        }
        snapshots.sort { $0.fence < $1.fence }
        return snapshots
    }

    private func snapshot(slot: Int32) -> DeviceSnapshot {
        let state = state(ofSlot: Int(slot))
        let memberships = membershipSnapshots(of: state.inside)
        let instantVisits = instantVisitSnapshots(of: state.instantVisits)
        // Closures, not `.map(optionSnapshot)`: a method used as a function value captures a copy of
        // the whole engine (every array and table retained and released), once per snapshot.
        return DeviceSnapshot(device: state.id, lastTime: state.lastTime, lastCoordinate: state.lastCoordinate,
                              updateCount: state.updateCount, memberships: memberships,
                              instantVisits: instantVisits, options: optionStates[slot].map { optionSnapshot($0) },
                              stream: streamStates[slot].map { streamSnapshot($0) })
    }

    /// Loads device states (and the engine-wide state they refer to) into a fresh engine — one that has
    /// processed no update — after its fences were added. Pending dwell and option timers are rebuilt
    /// from the memberships, option states and the fences' settings, so everything falls due exactly as
    /// it would have in the engine the snapshots were taken from.
    ///
    /// Option and stream state naming fences the engine does not watch is dropped (the engine drops it
    /// silently too); option state is ignored when the engine uses no detection option, and devices
    /// without option state start fresh when it does (as when a fence with options is added).
    ///
    /// - Parameter engineState: the original engine's ``engineState``; `nil` for one that never
    ///   processed an update or added a fence after its start.
    /// - Throws: ``RestoreError``; the engine is unchanged then.
    /// - Complexity: O(m log m) for m memberships and option entries in total.
    public mutating func restore(_ snapshots: [DeviceSnapshot], engineState: EngineState? = nil) throws(RestoreError) {
        guard devices.isEmpty else { throw .engineNotEmpty }
        let base = Int(clamping: max(0, engineState?.acceptedSequence ?? 0))
        var newTable = DeviceTable()
        var newDevices: [DeviceRecord] = []
        var newPool = PresencePool()
        var newLargeCounts: [Int32: UInt64] = [:]
        var newInstantVisits: [Int32: [InstantVisit]] = [:]
        newDevices.reserveCapacity(snapshots.count)
        var newTimers: [DwellTimer] = []
        var newOptions: [Int32: DeviceOptionsState] = [:]
        var newStreams: [Int32: DeviceStreamState] = [:]
        for snapshot in snapshots {
            let hash = DeviceTable.hash(snapshot.device)
            guard newTable.slot(of: snapshot.device, hash: hash, in: newDevices) == nil else {
                throw .duplicateDevice(snapshot.device)
            }
            let silent = snapshot.updateCount == 0 && snapshot.lastTime == -.infinity && snapshot.memberships.isEmpty
            guard snapshot.lastTime.isFinite || silent else {
                throw .inconsistent(device: snapshot.device, reason: "last update time is not finite")
            }
            let deviceSlot = Int32(newDevices.count)
            var state = DeviceState(id: snapshot.device)
            state.lastTime = snapshot.lastTime
            state.lastCoordinate = snapshot.lastCoordinate
            state.updateCount = snapshot.updateCount
            for m in snapshot.memberships {
                guard let slot = fences.slot(of: m.fence), let fence = fences[slot: slot] else {
                    throw .unknownFence(device: snapshot.device, fence: m.fence)
                }
                guard m.entryTime.isFinite else {
                    throw .inconsistent(device: snapshot.device, reason: "entry time in fence \(m.fence) is not finite")
                }
                var membership = Membership(slot: slot, entryTime: m.entryTime, visitSequence: m.visitSequence,
                                            ordinal: m.ordinal ?? 0, hasLegacyID: m.ordinal == nil)
                membership.hasDwelled = m.hasDwelled
                state.inside.append(membership)
                if !usesOptions, !m.hasDwelled, let dwell = fence.dwellTime ?? configuration.defaultDwellTime {
                    newTimers.append(DwellTimer(due: m.entryTime + dwell, device: deviceSlot, slot: slot,
                                                visitSequence: m.visitSequence))
                }
            }
            state.inside.sort { $0.slot < $1.slot }
            for visit in snapshot.instantVisits {
                guard let slot = fences.slot(of: visit.fence) else { continue }  // removed: inert, dropped
                guard visit.entryTime.isFinite else {
                    throw .inconsistent(device: snapshot.device, reason: "an instant visit of fence \(visit.fence) has a non-finite time")
                }
                state.instantVisits.removeAll { $0.slot == slot }
                state.instantVisits.append(InstantVisit(slot: slot, ordinal: visit.ordinal, entryTime: visit.entryTime))
            }
            for i in state.inside.indices.dropFirst() where state.inside[i].slot == state.inside[i - 1].slot {
                let id = fences.id(ofSlot: state.inside[i].slot)?.rawValue ?? "?"
                throw .inconsistent(device: snapshot.device, reason: "inside fence \(id) twice")
            }
            if usesOptions {
                if let o = snapshot.options {
                    newOptions[deviceSlot] = try optionState(o, device: snapshot.device)
                } else if state.updateCount > 0 {
                    var fresh = DeviceOptionsState()  // as activateOptions() does for a device seen before
                    fresh.lastSequence = base
                    fresh.anchor = .init(time: state.lastTime, coordinate: state.lastCoordinate, accuracy: nil)
                    newOptions[deviceSlot] = fresh
                }  // else: created on the device's first evaluation
            }
            if let stream = snapshot.stream, configuration.usesStreamOptions || !stream.buffered.isEmpty {
                newStreams[deviceSlot] = try streamState(stream, device: snapshot.device)
            }
            var record = state.record
            newPool.replace(&record.presence, with: state.inside)
            if state.updateCount < UInt64(DeviceRecord.countElsewhere) {
                record.smallUpdateCount = UInt32(state.updateCount)
            } else {
                record.smallUpdateCount = DeviceRecord.countElsewhere
                newLargeCounts[deviceSlot] = state.updateCount
            }
            newDevices.append(record)
            if !state.instantVisits.isEmpty { newInstantVisits[deviceSlot] = state.instantVisits }
            newTable.insert(deviceSlot, hash: hash, in: newDevices)
        }
        deviceTable = newTable
        devices = newDevices
        presencePool = newPool
        largeUpdateCounts = newLargeCounts
        instantVisits = newInstantVisits
        for timer in newTimers { timers.push(timer) }
        if let engineState {
            sequenceBase = base
            for slot in fenceAddedAt.keys { fenceAddedAt[slot]? += base }
            for (id, sequence) in engineState.fenceAdditions {
                if let slot = fences.slot(of: id) { fenceAddedAt[slot] = Int(clamping: sequence) }
            }
            arrivals = engineState.arrivals
        }
        streamStates = newStreams
        for slot in newStreams.keys.sorted() { scheduleRelease(slot) }
        for (slot, var opt) in newOptions {
            opt.scheduledDue = nil
            scheduleNext(slot, state: state(ofSlot: Int(slot)), opt: &opt)
            optionStates[slot] = opt
        }
    }

    /// The devices whose state ``advance(to:into:)`` may change if called with `time`: those with a
    /// pending dwell timer or option timer due by then, and those with updates a reorder window would
    /// release. Each is listed once, in no particular order; an empty result means `advance` would do
    /// nothing.
    ///
    /// - Complexity: O(d log n) for d due timers among n pending.
    public mutating func devicesWithDwellsDue(by time: Date) -> [DeviceID] {
        let now = time.timeIntervalSince1970
        guard now.isFinite else { return [] }
        var seen = Set<Int32>()
        var result: [DeviceID] = []
        if let first = timers.popFirst(dueBy: now) {
            var due = [first]
            while let timer = timers.popFirst(dueBy: now) { due.append(timer) }
            for timer in due {
                timers.push(timer)
                if seen.insert(timer.device).inserted { result.append(devices[Int(timer.device)].id) }
            }
        }
        if usesOptions, let first = optionTimers.first, first.due <= now {
            var due: [DeviceTimer] = []
            while let next = optionTimers.first, next.due <= now, let timer = optionTimers.pop() { due.append(timer) }
            for timer in due {
                optionTimers.push(timer)
                if seen.insert(timer.device).inserted { result.append(devices[Int(timer.device)].id) }
            }
        }
        if configuration.reorderWindow > 0 {
            for device in popReleaseTimers(upTo: now - configuration.reorderWindow) {
                scheduleRelease(device)  // this is only a look: keep the timer
                if seen.insert(device).inserted { result.append(devices[Int(device)].id) }
            }
        }
        return result
    }
}
