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
    /// (Kept as its 128 bits and written out when read.)
    public var id: String {
        get { identifier.text }
        set { identifier = EventIdentifier(newValue) }
    }
    /// Id of the visit (32 hex digits) this event belongs to: shared by its entry, dwell and exit.
    /// (Kept as its 128 bits and written out when read.)
    public var visitID: String {
        get { visitIdentifier.text }
        set { visitIdentifier = EventIdentifier(newValue) }
    }
    /// ``id`` before it is written out.
    var identifier: EventIdentifier
    /// ``visitID`` before it is written out.
    var visitIdentifier: EventIdentifier
    /// What happened.
    public var kind: GeofenceEventKind
    /// The fence.
    public var fence: FenceID
    /// The device.
    public var device: DeviceID
    /// When it happened. For entry and exit, the time of the update that showed it; for dwell, the entry
    /// time plus the fence's dwell time.
    public var time: Date
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
        self.init(identifier: EventIdentifier(id), visitIdentifier: EventIdentifier(visitID), kind: kind,
                  fence: fence, device: device, time: time, coordinate: coordinate, timeInside: timeInside,
                  observedAt: observedAt, reason: reason)
    }

    /// Creates an event whose ids are written out when read (the engine's way).
    init(identifier: EventIdentifier, visitIdentifier: EventIdentifier, kind: GeofenceEventKind, fence: FenceID,
         device: DeviceID, time: Date, coordinate: Coordinate, timeInside: Double? = nil, observedAt: Date? = nil,
         reason: ExitReason = .left, fenceSlot: FenceSet.Slot = -1) {
        self.identifier = identifier
        self.visitIdentifier = visitIdentifier
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
