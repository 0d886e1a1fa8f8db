import PerimeterFences
import PerimeterGeometry

/// The per-device state of the detection options, in a form a store can persist (fences by id, times
/// as the engine's own `Double` seconds since 1970, so everything round-trips bit for bit).
extension DetectionEngine {
    /// What the options path (debounce, repeated dwell, crossings, interpolation, initial trigger)
    /// keeps for one device beyond its presence.
    public struct DeviceOptionSnapshot: Hashable, Sendable {
        /// Transitions seen but not yet confirmed (entry or exit delay), in the engine's order.
        public var pending: [PendingTransitionSnapshot]
        /// Repeated dwells already fired in the current visits, ordered by fence id.
        public var dwellRepeats: [DwellRepeatSnapshot]
        /// The last accepted fix (one end of the segment used by crossings and interpolation).
        public var anchor: FixSnapshot?
        /// The engine's accepted-update sequence (``EngineState/acceptedSequence``) after this device's
        /// last update: a fence added later has not been evaluated for this device yet.
        public var lastSequence: Int64

        /// Creates an option snapshot.
        public init(pending: [PendingTransitionSnapshot] = [], dwellRepeats: [DwellRepeatSnapshot] = [],
                    anchor: FixSnapshot? = nil, lastSequence: Int64 = 0) {
            self.pending = pending
            self.dwellRepeats = dwellRepeats
            self.anchor = anchor
            self.lastSequence = lastSequence
        }
    }

    /// A debounced transition waiting for its confirmation.
    public struct PendingTransitionSnapshot: Hashable, Sendable {
        /// The fence.
        public var fence: FenceID
        /// `true` for a pending entry, `false` for a pending exit.
        public var toInside: Bool
        /// When the new presence was first shown (possibly interpolated): the event's time.
        public var since: Double
        /// The time of the update that first showed it.
        public var observedAt: Double
        /// Where (the event's coordinate).
        public var coordinate: Coordinate
        /// The device's update count at that update (becomes the ``MembershipSnapshot/visitSequence``
        /// of the visit an entry starts).
        public var sequence: UInt64

        /// Creates a pending transition.
        public init(fence: FenceID, toInside: Bool, since: Double, observedAt: Double, coordinate: Coordinate,
                    sequence: UInt64) {
            self.fence = fence
            self.toInside = toInside
            self.since = since
            self.observedAt = observedAt
            self.coordinate = coordinate
            self.sequence = sequence
        }
    }

    /// How many repeated dwells (`dwellEvery`) fired in one visit.
    public struct DwellRepeatSnapshot: Hashable, Sendable {
        /// The fence.
        public var fence: FenceID
        /// The visit (its ``MembershipSnapshot/visitSequence``).
        public var visitSequence: UInt64
        /// Repeated dwells fired after the first.
        public var count: Int

        /// Creates a repeat count.
        public init(fence: FenceID, visitSequence: UInt64, count: Int) {
            self.fence = fence
            self.visitSequence = visitSequence
            self.count = count
        }
    }

    /// One fix: time, position and accuracy as the engine saw them.
    public struct FixSnapshot: Hashable, Sendable {
        /// Seconds since 1970.
        public var time: Double
        /// The position (normalised by the engine).
        public var coordinate: Coordinate
        /// Horizontal accuracy in metres, if reported.
        public var accuracy: Double?

        /// Creates a fix.
        public init(time: Double, coordinate: Coordinate, accuracy: Double?) {
            self.time = time
            self.coordinate = coordinate
            self.accuracy = accuracy
        }
    }

    /// The update-stream state of one device: its reorder buffer and the identities of recent updates
    /// (duplicate suppression).
    public struct DeviceStreamSnapshot: Hashable, Sendable {
        /// Updates waiting in the reorder window, ascending by time (ties in arrival order).
        public var buffered: [BufferedUpdateSnapshot]
        /// The latest time seen from this device (buffered or processed); `-infinity` for none.
        public var newest: Double
        /// Recent updates remembered for duplicate suppression, oldest first (time and normalised position).
        public var recent: [FixSnapshot]

        /// Creates a stream snapshot.
        public init(buffered: [BufferedUpdateSnapshot] = [], newest: Double = -.infinity, recent: [FixSnapshot] = []) {
            self.buffered = buffered
            self.newest = newest
            self.recent = recent
        }
    }

    /// An update waiting in a reorder buffer.
    public struct BufferedUpdateSnapshot: Hashable, Sendable {
        /// The fix (already validated and normalised).
        public var fix: FixSnapshot
        /// Arrival number, engine-wide (orders ties across devices; see ``EngineState/arrivals``).
        public var arrival: UInt64

        /// Creates a buffered update.
        public init(fix: FixSnapshot, arrival: UInt64) {
            self.fix = fix
            self.arrival = arrival
        }
    }

    /// Engine-wide state that device snapshots refer to.
    public struct EngineState: Hashable, Sendable {
        /// Accepted updates over the engine's whole history (across restores).
        public var acceptedSequence: Int64
        /// The last arrival number given to a buffered update.
        public var arrivals: UInt64
        /// Fences added after the engine's start, with ``acceptedSequence`` + 1 at that moment (devices
        /// whose ``DeviceOptionSnapshot/lastSequence`` is smaller have not been evaluated against them).
        public var fenceAdditions: [FenceID: Int64]

        /// Creates an engine state.
        public init(acceptedSequence: Int64 = 0, arrivals: UInt64 = 0, fenceAdditions: [FenceID: Int64] = [:]) {
            self.acceptedSequence = acceptedSequence
            self.arrivals = arrivals
            self.fenceAdditions = fenceAdditions
        }
    }

    // MARK: - Taking snapshots

    /// The engine-wide state (fence additions of fences still watched).
    /// - Complexity: O(f) for the f fences added since the engine started.
    public var engineState: EngineState {
        var additions: [FenceID: Int64] = [:]
        for (slot, sequence) in fenceAddedAt {
            if let fence = fences.id(ofSlot: slot) { additions[fence] = Int64(sequence) }
        }
        return EngineState(acceptedSequence: Int64(acceptedSequence), arrivals: arrivals, fenceAdditions: additions)
    }

    /// ``EngineState/acceptedSequence`` alone (cheap: no fence walk).
    public var acceptedUpdateSequence: Int64 { Int64(acceptedSequence) }

    /// ``EngineState/arrivals`` alone.
    public var arrivalCount: UInt64 { arrivals }

    /// The sequence at which the fence with `id` was added (see ``EngineState/fenceAdditions``), or `nil`
    /// when it was part of the engine from the start or is not watched.
    public func additionSequence(of id: FenceID) -> Int64? {
        guard let slot = fences.slot(of: id), let sequence = fenceAddedAt[slot] else { return nil }
        return Int64(sequence)
    }

    /// The devices that carry option state (whose snapshots name fences beyond their presence), in order
    /// of first update.
    public var devicesWithOptionState: [DeviceID] {
        optionStates.keys.sorted().map { devices[Int($0)].id }
    }

    func optionSnapshot(_ o: DeviceOptionsState) -> DeviceOptionSnapshot {
        var pending: [PendingTransitionSnapshot] = []
        for p in o.pending {
            guard let fence = fences.id(ofSlot: p.slot) else { continue }  // removed: inert, dropped
            pending.append(PendingTransitionSnapshot(fence: fence, toInside: p.toInside, since: p.since,
                                                     observedAt: p.observedAt, coordinate: p.coordinate,
                                                     sequence: p.sequence))
        }
        var repeats: [DwellRepeatSnapshot] = []
        for (slot, entry) in o.dwellRepeats {
            guard let fence = fences.id(ofSlot: slot) else { continue }
            repeats.append(DwellRepeatSnapshot(fence: fence, visitSequence: entry.visit, count: entry.count))
        }
        repeats.sort { $0.fence < $1.fence }
        let anchor = o.anchor.map { FixSnapshot(time: $0.time, coordinate: $0.coordinate, accuracy: $0.accuracy) }
        return DeviceOptionSnapshot(pending: pending, dwellRepeats: repeats, anchor: anchor,
                                    lastSequence: Int64(o.lastSequence))
    }

    func streamSnapshot(_ s: DeviceStreamState) -> DeviceStreamSnapshot {
        DeviceStreamSnapshot(
            buffered: s.buffer.map {
                BufferedUpdateSnapshot(fix: FixSnapshot(time: $0.time, coordinate: $0.coordinate, accuracy: $0.accuracy),
                                       arrival: $0.arrival)
            },
            newest: s.newest,
            recent: s.recent.map {
                FixSnapshot(time: Double(bitPattern: $0.time),
                            coordinate: Coordinate(latitude: Double(bitPattern: $0.latitude),
                                                   longitude: Double(bitPattern: $0.longitude)),
                            accuracy: nil)
            })
    }

    // MARK: - Restoring

    /// The option state of a snapshot, with fences resolved to slots; entries naming fences the engine
    /// does not watch are dropped (the engine drops such state silently too).
    func optionState(_ s: DeviceOptionSnapshot, device: DeviceID) throws(RestoreError) -> DeviceOptionsState {
        var o = DeviceOptionsState()
        for p in s.pending {
            guard let slot = fences.slot(of: p.fence) else { continue }
            guard p.since.isFinite, p.observedAt.isFinite else {
                throw .inconsistent(device: device, reason: "a pending transition in fence \(p.fence) has a non-finite time")
            }
            guard !o.pending.contains(where: { $0.slot == slot }) else {
                throw .inconsistent(device: device, reason: "two pending transitions in fence \(p.fence)")
            }
            o.pending.append(.init(slot: slot, toInside: p.toInside, since: p.since, observedAt: p.observedAt,
                                   coordinate: p.coordinate, sequence: p.sequence))
        }
        for r in s.dwellRepeats {
            guard let slot = fences.slot(of: r.fence) else { continue }
            guard r.count >= 0 else {
                throw .inconsistent(device: device, reason: "negative repeated-dwell count in fence \(r.fence)")
            }
            o.dwellRepeats[slot] = (r.visitSequence, r.count)
        }
        if let a = s.anchor {
            guard a.time.isFinite else { throw .inconsistent(device: device, reason: "the last fix's time is not finite") }
            o.anchor = .init(time: a.time, coordinate: a.coordinate, accuracy: a.accuracy)
        }
        o.lastSequence = Int(clamping: s.lastSequence)
        return o
    }

    func streamState(_ s: DeviceStreamSnapshot, device: DeviceID) throws(RestoreError) -> DeviceStreamState {
        var state = DeviceStreamState()
        var previous = -Double.infinity
        for b in s.buffered {
            guard b.fix.time.isFinite, b.fix.time >= previous else {
                throw .inconsistent(device: device, reason: "the reorder buffer is not in time order")
            }
            previous = b.fix.time
            state.buffer.append(BufferedUpdate(time: b.fix.time, coordinate: b.fix.coordinate,
                                               accuracy: b.fix.accuracy, arrival: b.arrival))
        }
        guard !s.newest.isNaN, s.newest >= previous else {
            throw .inconsistent(device: device, reason: "the newest time is older than a buffered update")
        }
        state.newest = s.newest
        state.recent = s.recent.map { UpdateIdentity(time: $0.time, coordinate: $0.coordinate) }
        state.recentSet = Set(state.recent)
        return state
    }
}
