import PerimeterFences

/// Where a ``GeofenceEvent``'s id and visit id come from.
///
/// The engine does not hash when it makes an event: it keeps what the two ids are hashes of and the
/// ids are made when read (``GeofenceEvent/identifiers``). Most events of a busy engine are counted,
/// filtered or dropped without their ids being looked at, and the two hashes were about half of the
/// instructions of an entry or exit. Events read back from a store, or whose ids were set, carry
/// their ids as given.
enum EventIdentity: Sendable {
    /// Ids as given (by a store, a test, or an event whose id inputs were edited after it was made).
    case given(id: EventIdentifier, visit: EventIdentifier)
    /// Ids made from these inputs and the event's device, fence and kind.
    case derived(EventIDInputs)
}

/// What an engine-made event's ids hash besides its device, fence and kind (docs/semantics.md, "Event
/// and visit ids"): the visit's entry time and number, the event's time as the engine had it (a `Double`:
/// the event's `Date` need not give back the same bits), and the repeat or level key where one visit
/// has several events of a kind. 32 bytes.
struct EventIDInputs: Sendable {
    /// The visit's entry time.
    var entryTime: Double
    /// The event's time, as hashed.
    var time: Double
    /// The visit's ordinal, or for a visit restored from a store written before ordinals its update
    /// sequence (62 bits), with ``legacyBit`` and ``extraBit``.
    private var bits: UInt64
    /// The extra word when ``extraBit`` is set.
    private var extraWord: UInt64

    private static let legacyBit: UInt64 = 1 << 63
    private static let extraBit: UInt64 = 1 << 62

    /// The inputs of an event at `time` of the visit `m`, with `extra` (see
    /// ``DetectionEngine/makeEvent(_:fence:device:membership:time:coordinate:extra:)``).
    @inline(__always)
    init(membership m: Membership, time: Double, extra: UInt64?) {
        entryTime = m.entryTime
        self.time = time
        // The sequence has 62 bits (``Membership/visitSequence``): the two flags fit above it.
        bits = m.hasLegacyID ? m.visitSequence | Self.legacyBit : UInt64(m.ordinal)
        if extra != nil { bits |= Self.extraBit }
        extraWord = extra ?? 0
    }

    /// The hash whose digits are the visit id.
    @inline(__always)
    func visitHash(device: DeviceID, fence: FenceID) -> StableHash {
        bits & Self.legacyBit != 0
            ? StableHash.visit(device: device, fence: fence, entryTime: entryTime, legacySequence: bits & (Self.extraBit - 1))
            : StableHash.visit(device: device, fence: fence, entryTime: entryTime,
                               ordinal: UInt32(truncatingIfNeeded: bits))
    }

    /// The hash whose digits are the event id, from the hash of its visit.
    @inline(__always)
    func eventHash(visit: StableHash, kind: GeofenceEventKind) -> StableHash {
        StableHash.event(visit: visit, kind: kind, time: time, extra: bits & Self.extraBit != 0 ? extraWord : nil)
    }

    /// Whether the inputs are the same bits (so with the same device, fence and kind, the same ids).
    static func == (a: EventIDInputs, b: EventIDInputs) -> Bool {
        a.entryTime.bitPattern == b.entryTime.bitPattern && a.time.bitPattern == b.time.bitPattern
            && a.bits == b.bits && a.extraWord == b.extraWord
    }
}

extension StableHash {
    /// Marks visit ids derived from what a visit is (as opposed to the legacy update sequence).
    private static let visitIDScheme: UInt64 = 2

    /// The hash of a visit id: what the visit is — device, fence, entry time and which visit of that
    /// fence beginning at that instant it is — so re-posting or replaying updates gives the same ids.
    @inline(__always)
    static func visit(device: DeviceID, fence: FenceID, entryTime: Double, ordinal: UInt32) -> StableHash {
        var hash = StableHash()
        hash.combine(device.rawValue)
        hash.combine(fence.rawValue)
        hash.combine(entryTime)
        hash.combine(UInt64(ordinal))
        hash.combine(visitIDScheme)  // one more word: never equal to a legacy id's input
        return hash
    }

    /// The hash of the id of a visit restored from a store written before ordinals: the id its entry
    /// was given, from the device's update sequence at entry.
    static func visit(device: DeviceID, fence: FenceID, entryTime: Double, legacySequence: UInt64) -> StableHash {
        var hash = StableHash()
        hash.combine(device.rawValue)
        hash.combine(fence.rawValue)
        hash.combine(entryTime)
        hash.combine(legacySequence)
        return hash
    }

    /// The hash of an event id: the visit id's text, the kind, the event time, plus `extra` where one
    /// visit has several events of a kind (the repeat number of a repeated dwell, the level key).
    @inline(__always)
    static func event(visit: StableHash, kind: GeofenceEventKind, time: Double, extra: UInt64?) -> StableHash {
        var hash = StableHash()
        hash.combine(hexOf: visit)  // the visit id's text, as the id's definition reads
        hash.combine(kind.rawValue)
        hash.combine(time)
        if let extra { hash.combine(extra) }
        return hash
    }
}
