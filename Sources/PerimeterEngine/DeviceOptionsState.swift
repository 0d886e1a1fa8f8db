import PerimeterFences
import PerimeterGeometry

/// The extra state one device carries when detection options are on; kept apart from ``DeviceState``
/// so the default path stays as small and fast as before (devices of an engine without options never
/// get one).
struct DeviceOptionsState: Sendable {
    /// A transition seen but not yet confirmed (entry or exit delay).
    struct Pending: Sendable {
        var slot: FenceSet.Slot
        /// `true` for a pending entry, `false` for a pending exit.
        var toInside: Bool
        /// When the new presence was first shown (possibly interpolated): the event's time.
        var since: Double
        /// The update that first showed it.
        var observedAt: Double
        var coordinate: Coordinate
        /// The device's update count at that update (numbers the visit an entry starts).
        var sequence: UInt64
    }

    /// The last accepted update: one end of the segment used by crossings and interpolation.
    struct Anchor: Sendable {
        var time: Double
        var coordinate: Coordinate
        var accuracy: Double?
    }

    var pending: [Pending] = []
    /// Repeated dwells fired in the current visit, by slot (with the visit they belong to).
    var dwellRepeats: [FenceSet.Slot: (visit: UInt64, count: Int)] = [:]
    var anchor: Anchor?
    /// The engine's accepted-update count after this device's last update (for "fence added since").
    var lastSequence: Int = 0
    /// The due time of the option timer last scheduled for this device, if still pending.
    var scheduledDue: Double?

    /// The earliest time a visit of this device may still begin at: its last update's time, or the
    /// start of a pending entry or exit if earlier (interpolated or debounced transitions).
    func earliestVisitStart(after state: DeviceState) -> Double {
        var earliest = state.lastTime
        for p in pending where p.since < earliest { earliest = p.since }
        return earliest
    }

    func pendingIndex(slot: FenceSet.Slot) -> Int? { pending.firstIndex { $0.slot == slot } }

    func repeats(slot: FenceSet.Slot, visit: UInt64) -> Int {
        guard let entry = dwellRepeats[slot], entry.visit == visit else { return 0 }
        return entry.count
    }
}

/// The option state of the update stream of one device: the reorder buffer and recent update
/// identities for duplicate suppression. Only engines with a reorder window or duplicate
/// suppression keep one.
struct DeviceStreamState: Sendable {
    /// Updates waiting in the reorder window, ascending by time (ties in arrival order).
    var buffer: [BufferedUpdate] = []
    /// The latest time seen from this device (buffered or processed).
    var newest: Double = -.infinity
    /// Identities of recent updates (processed or buffered), oldest first, bounded.
    var recent: [UpdateIdentity] = []
    var recentSet: Set<UpdateIdentity> = []
    /// The due time of the release timer last scheduled for this device, if still pending.
    var releaseDue: Double?

    static let recentLimit = 1024

    mutating func remember(_ identity: UpdateIdentity) {
        recent.append(identity)
        recentSet.insert(identity)
        if recent.count > 2 * Self.recentLimit {
            for old in recent.prefix(recent.count - Self.recentLimit) { recentSet.remove(old) }
            recent.removeFirst(recent.count - Self.recentLimit)
            for kept in recent { recentSet.insert(kept) }
        }
    }
}

/// An update waiting in a reorder buffer, already validated.
struct BufferedUpdate: Sendable {
    var time: Double
    var coordinate: Coordinate
    var accuracy: Double?
    var arrival: UInt64
}

/// What makes two updates "the same": device (implied by where it is stored), time and position, bit for bit.
struct UpdateIdentity: Hashable, Sendable {
    var time: UInt64
    var latitude: UInt64
    var longitude: UInt64

    init(time: Double, coordinate: Coordinate) {
        self.time = time.bitPattern
        latitude = coordinate.latitude.bitPattern
        longitude = coordinate.longitude.bitPattern
    }
}

/// "Device `device` may have something due at `due`": the option path's timer. Stale entries are
/// harmless: a device with nothing due is simply skipped.
struct DeviceTimer: Sendable, HeapElement {
    var due: Double
    var device: Int32

    static func precedes(_ a: DeviceTimer, _ b: DeviceTimer) -> Bool { a.due < b.due }
}
