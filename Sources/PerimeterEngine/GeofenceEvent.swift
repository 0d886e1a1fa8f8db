import Foundation
import PerimeterFences
import PerimeterGeometry

/// Something that happened between one device and one fence: an entry, a dwell, an exit, and with
/// options on, a cross or an inside (level) event.
///
/// Events are deterministic: the same fences and the same updates in the same order give the same
/// events with the same ids. An entry, the dwell that follows it and the exit that ends it share one
/// ``visitID``.
public struct GeofenceEvent: Hashable, Sendable {
    /// Unique id of this event (32 hex digits), stable across runs: derived from the visit and the kind.
    /// (Made when read: see ``EventIdentity``.)
    public var id: String {
        get { identifier.text }
        set { identity = .given(id: EventIdentifier(newValue), visit: visitIdentifier) }
    }
    /// Id of the visit (32 hex digits) this event belongs to: shared by its entry, dwell and exit.
    /// (Made when read: see ``EventIdentity``.)
    public var visitID: String {
        get { visitIdentifier.text }
        set { identity = .given(id: identifier, visit: EventIdentifier(newValue)) }
    }
    /// ``id`` and ``visitID`` together, the visit hashed once for both: for a reader that writes both
    /// out (an event's JSON) of an event whose ids may not be made yet (``makeIDsNow()``), where reading
    /// ``id`` then ``visitID`` hashes the visit twice. The same texts as those two.
    public var idAndVisitID: (id: String, visitID: String) {
        let (id, visit) = identifiers
        return (id.text, visit.text)
    }
    /// Where ``id`` and ``visitID`` come from: given, or the engine's inputs of their hashes.
    var identity: EventIdentity
    /// ``id`` before it is written out.
    var identifier: EventIdentifier {
        switch identity {
        case let .given(id, _): id  // without a copy of the visit id
        case .derived: identifiers.id
        }
    }
    /// ``visitID`` before it is written out.
    var visitIdentifier: EventIdentifier {
        switch identity {
        case let .given(_, visit): visit
        case let .derived(inputs): inputs.visitHash(device: device, fence: fence).identifier
        }
    }
    /// ``id`` and ``visitID`` before they are written out; the visit's hash made once for both.
    var identifiers: (id: EventIdentifier, visit: EventIdentifier) {
        switch identity {
        case let .given(id, visit): return (id, visit)
        case let .derived(inputs):
            let visit = inputs.visitHash(device: device, fence: fence)
            return (inputs.eventHash(visit: visit, kind: kind).identifier, visit.identifier)
        }
    }
    /// What happened.
    public var kind: GeofenceEventKind { willSet { makeIDsNow() } }
    /// The fence.
    public var fence: FenceID { willSet { makeIDsNow() } }
    /// The device.
    public var device: DeviceID { willSet { makeIDsNow() } }
    /// When it happened. For entry and exit, the time of the update that showed it; for dwell, the entry
    /// time plus the fence's dwell time.
    public var time: Date { willSet { makeIDsNow() } }
    /// The device's location: the update that caused the event (for a dwell, the latest known location).
    public var coordinate: Coordinate
    /// On exit: how long the device was inside, in seconds; on a cross, how long the straight path
    /// between the two updates ran inside. `nil` for other kinds.
    public var timeInside: Double?
    /// When the update that revealed the event was measured: equal to ``time`` unless the time was
    /// estimated (interpolated entries and exits, crossings).
    public var observedAt: Date
    /// Why an exit happened: ``ExitReason/left`` unless the device timed out. `.left` for other kinds.
    public var reason: ExitReason
    /// Where the engine that made the event kept its fence (``FenceSet/Slot``), so that the fence is found
    /// without hashing ``fence``; not part of the event's value (see ``FenceSlotHint``).
    var fenceSlot = FenceSlotHint()

    /// Creates an event. The engine makes events; this initialiser serves stores and tests.
    public init(id: String, visitID: String, kind: GeofenceEventKind, fence: FenceID, device: DeviceID,
                time: Date, coordinate: Coordinate, timeInside: Double? = nil, observedAt: Date? = nil,
                reason: ExitReason = .left) {
        self.init(identity: .given(id: EventIdentifier(id), visit: EventIdentifier(visitID)), kind: kind,
                  fence: fence, device: device, time: time, coordinate: coordinate, timeInside: timeInside,
                  observedAt: observedAt, reason: reason)
    }

    /// Creates an event whose ids come from `identity` (the engine's way: made when read).
    init(identity: EventIdentity, kind: GeofenceEventKind, fence: FenceID,
         device: DeviceID, time: Date, coordinate: Coordinate, timeInside: Double? = nil, observedAt: Date? = nil,
         reason: ExitReason = .left, fenceSlot: FenceSet.Slot = -1) {
        self.identity = identity
        self.kind = kind
        self.fence = fence
        self.device = device
        self.time = time
        self.coordinate = coordinate
        self.timeInside = timeInside
        self.observedAt = observedAt ?? time
        self.reason = reason
        self.fenceSlot = FenceSlotHint(fenceSlot)
    }

    /// Makes ``id`` and ``visitID`` now (one hash of the visit for both) and keeps them in the event, so
    /// that reading them later costs no hashing: for a holder that reads both, or one several times
    /// (a service logs, stores and sends every event). The event's value is unchanged.
    ///
    /// The engine itself keeps what the ids are made from and makes them when read (``EventIdentity``).
    /// Editing ``kind``, ``fence``, ``device`` or ``time`` calls this first: an event's ids stay what
    /// they were when it was made, whatever is edited in it later.
    public mutating func makeIDsNow() {
        guard case .derived = identity else { return }
        let (id, visit) = identifiers
        identity = .given(id: id, visit: visit)
    }

    /// Two events are equal when what they say is equal: their ids' texts and every public field.
    public static func == (a: GeofenceEvent, b: GeofenceEvent) -> Bool {
        guard a.kind == b.kind, a.fence == b.fence, a.device == b.device, a.time == b.time,
              a.coordinate == b.coordinate, a.timeInside == b.timeInside, a.observedAt == b.observedAt,
              a.reason == b.reason else { return false }
        // The same inputs with the same kind, fence and device make the same ids: no hashing.
        if case let .derived(x) = a.identity, case let .derived(y) = b.identity, x == y { return true }
        let (aID, aVisit) = a.identifiers, (bID, bVisit) = b.identifiers
        return aID == bID && aVisit == bVisit
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        let (id, visit) = identifiers
        hasher.combine(id)
        hasher.combine(visit)
        hasher.combine(kind)
        hasher.combine(fence)
        hasher.combine(device)
        hasher.combine(time)
        hasher.combine(coordinate)
        hasher.combine(timeInside)
        hasher.combine(observedAt)
        hasher.combine(reason)
    }
}

/// The fence slot an engine recorded in a ``GeofenceEvent``: a hint for finding the fence, which a reader
/// checks against the event's fence id (a slot is only meaningful in the engine that made the event).
/// Every hint equals every other and hashes to nothing, so that two events are equal exactly when what
/// they say is equal — an event the engine made and the same event read back from a store (hint -1).
struct FenceSlotHint: Hashable, Sendable {
    /// The slot; -1 when unknown.
    var slot: FenceSet.Slot

    init(_ slot: FenceSet.Slot = -1) { self.slot = slot }

    static func == (_: FenceSlotHint, _: FenceSlotHint) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
