import PerimeterGeometry
import PerimeterIndex

/// The fences an engine watches, with an index that answers "which fences contain this point?".
///
/// Each fence lives in a *slot* whose number never changes while the fence exists, so per-device state
/// can refer to fences by a small integer. Removing a fence frees nothing in place: its slot stays empty
/// (and is never reused), so stale references are recognised instead of being confused with a new fence.
/// The index is rebuilt lazily, once after any batch of changes.
public struct FenceSet: Sendable {
    /// Slot number of a fence.
    public typealias Slot = Int32
    /// Slots a query found, in storage the caller keeps: the index's ``RegionBuffer`` (slot numbers are
    /// the index's region numbers).
    public typealias SlotBuffer = RegionBuffer

    @usableFromInline private(set) var slots: [Fence?] = []
    /// Per slot, what the engine reads on every update (see ``SlotTraits``).
    @usableFromInline private(set) var traits: [SlotTraits] = []
    private var slotByID: [FenceID: Slot] = [:]
    private var index = RegionIndex(regions: [])
    /// Whether fences changed since the index was built. Read by the inlined ``prepare()``, so that a
    /// query on a prepared set costs no call for the check.
    @usableFromInline private(set) var indexIsStale = false
    /// How many fences set detection options of their own.
    private var fencesWithOptions = 0
    /// How many fences set a dwell time of their own.
    private var fencesWithDwellTimes = 0

    /// An empty set.
    public init() {}

    /// A set holding `fences`; a later fence replaces an earlier one with the same id.
    public init<S: Sequence>(_ fences: S) where S.Element == Fence {
        for fence in fences { upsert(fence) }
    }

    /// The number of fences.
    public var count: Int { slotByID.count }

    /// Whether the set holds no fence.
    public var isEmpty: Bool { slotByID.isEmpty }

    /// Whether some fence sets detection options of its own (``Fence/options`` not all off).
    /// - Complexity: O(1).
    public var containsFenceOptions: Bool { fencesWithOptions > 0 }

    /// Whether some fence sets a dwell time of its own (``Fence/dwellTime`` not `nil`): without one, and
    /// without an engine default, no visit ever has a dwell due.
    /// - Complexity: O(1).
    public var containsDwellTimes: Bool { fencesWithDwellTimes > 0 }

    /// The fences, in slot order (the order they were first added).
    public var fences: [Fence] { slots.compactMap { $0 } }

    /// The fence with `id`, if any.
    public func fence(id: FenceID) -> Fence? {
        slotByID[id].flatMap { slots[Int($0)] }
    }

    /// The slot of the fence with `id`, if any.
    public func slot(of id: FenceID) -> Slot? { slotByID[id] }

    /// The fence in `slot`, or `nil` when that slot was emptied.
    @inlinable
    public func fence(inSlot slot: Slot) -> Fence? { self[slot: slot] }

    /// The fence in `slot`, or `nil` when that slot was emptied (or never existed).
    public subscript(slot slot: Slot) -> Fence? {
        slot >= 0 && Int(slot) < slots.count ? slots[Int(slot)] : nil
    }

    /// The id of the fence in `slot`, or `nil` when that slot was emptied (or never existed).
    /// - Complexity: O(1); copies the id alone, where ``subscript(slot:)`` copies the whole fence (its
    ///   region, properties and strings, each retained). Inlinable: called once per logged event (to
    ///   check the event's fence slot) and per membership of a commit snapshot.
    @inlinable
    public func id(ofSlot slot: Slot) -> FenceID? {
        slot >= 0 && Int(slot) < slots.count ? slots[Int(slot)]?.id : nil
    }

    /// The hot settings of the fence in `slot`; ``SlotTraits/empty`` for an emptied or unknown slot.
    /// - Complexity: O(1), copies 32 bytes (no reference counting), unlike ``subscript(slot:)``.
    @inlinable
    public func traits(ofSlot slot: Slot) -> SlotTraits {
        slot >= 0 && Int(slot) < traits.count ? traits[Int(slot)] : .empty
    }

    /// Calls `body` with the traits of every slot, by slot, in place: for a loop over several slots that
    /// would otherwise check each slot's range and copy its traits once per ``traits(ofSlot:)``.
    @inlinable
    public func withUnsafeTraits<R>(_ body: (UnsafeBufferPointer<SlotTraits>) throws -> R) rethrows -> R {
        try traits.withUnsafeBufferPointer(body)
    }

    /// Whether `slot` holds a fence that has not expired at `time` (seconds since 1970).
    @inlinable
    public func isActive(slot: Slot, at time: Double) -> Bool {
        let t = traits(ofSlot: slot)
        return t.exists && time < t.expiry
    }

    /// Adds `fence`, or replaces the fence with the same id (keeping its slot).
    /// - Returns: the fence's slot and whether it replaced an existing fence.
    @discardableResult
    public mutating func upsert(_ fence: Fence) -> (slot: Slot, replaced: Bool) {
        indexIsStale = true
        tally(fence, by: 1)
        if let slot = slotByID[fence.id] {
            if let old = slots[Int(slot)] { tally(old, by: -1) }
            slots[Int(slot)] = fence
            traits[Int(slot)] = SlotTraits(fence)
            return (slot, true)
        }
        let slot = Slot(slots.count)
        slots.append(fence)
        traits.append(SlotTraits(fence))
        slotByID[fence.id] = slot
        return (slot, false)
    }

    /// Removes the fence with `id`; returns it (and its former slot), or `nil` when there was none.
    @discardableResult
    public mutating func remove(id: FenceID) -> (fence: Fence, slot: Slot)? {
        guard let slot = slotByID.removeValue(forKey: id), let fence = slots[Int(slot)] else { return nil }
        slots[Int(slot)] = nil
        traits[Int(slot)] = .empty
        tally(fence, by: -1)
        indexIsStale = true
        return (fence, slot)
    }

    /// Removes every fence.
    public mutating func removeAll() {
        slots = Array(repeating: nil, count: slots.count)
        traits = Array(repeating: .empty, count: traits.count)
        slotByID = [:]
        fencesWithOptions = 0
        fencesWithDwellTimes = 0
        indexIsStale = true
    }

    /// Adds `fence` to (`change` 1) or takes it from (`change` −1) the counts of fences that set
    /// options or a dwell time of their own.
    private mutating func tally(_ fence: Fence, by change: Int) {
        if !fence.options.isOff { fencesWithOptions += change }
        if fence.dwellTime != nil { fencesWithDwellTimes += change }
    }

    /// Rebuilds the index if fences changed since it was built. Queries call this themselves; call it
    /// explicitly to pay the cost at a moment of your choosing.
    ///
    /// - Complexity: O(total vertices) when stale, O(1) otherwise.
    @inlinable
    public mutating func prepare() {
        if indexIsStale { rebuildIndex() }
    }

    /// Builds the index of the fences as they are now.
    @usableFromInline
    mutating func rebuildIndex() {
        let empty = Region(.polygons([]))
        index = RegionIndex(regions: slots.map { $0?.region ?? empty })
        indexIsStale = false
    }

    /// Makes `result` hold the slots of every fence containing `coordinate`, ascending: the engine's
    /// query (``RegionIndex/regions(containing:into:)``, the ``SlotBuffer`` form: no per-query
    /// clearing or growing of an array).
    ///
    /// - Complexity: proportional to the fences near the point, not to the number of fences.
    @inlinable
    public mutating func slots(containing coordinate: Coordinate, into result: inout SlotBuffer) {
        prepare()
        query(coordinate, into: &result)
    }

    /// Writes the slots of every fence containing `coordinate` into `result`, ascending: the answer of
    /// the ``SlotBuffer`` form, for callers that keep an array.
    ///
    /// - Complexity: proportional to the fences near the point, not to the number of fences.
    @inlinable
    public mutating func slots(containing coordinate: Coordinate, into result: inout [Slot]) {
        prepare()
        query(coordinate, into: &result)
    }

    /// Reads ahead, for a later ``slots(containing:into:)`` of `coordinate`, one level of the index's
    /// memory (``RegionIndex/readAhead(_:step:)``); reads the index as last prepared.
    @inline(__always)
    public func readAhead(_ coordinate: Coordinate, step: Int) -> UInt64 {
        index.readAhead(coordinate, step: step)
    }

    @usableFromInline
    func query(_ coordinate: Coordinate, into result: inout SlotBuffer) {
        index.regions(containing: coordinate, into: &result)
    }

    @usableFromInline
    func query(_ coordinate: Coordinate, into result: inout [Slot]) {
        index.regions(containing: coordinate, into: &result)
    }

    /// The fences containing `coordinate`, ordered by id.
    public mutating func fences(containing coordinate: Coordinate) -> [Fence] {
        var result: [Slot] = []
        slots(containing: coordinate, into: &result)
        return result.compactMap { self[slot: $0] }.sorted { $0.id < $1.id }
    }
}

/// The few settings of a fence that detection reads on every update, kept beside the `Fence` values so
/// that the hot path copies a small trivial struct instead of a whole fence (strings, dictionaries).
public struct SlotTraits: Hashable, Sendable {
    /// Whether the slot holds a fence.
    public var exists: Bool
    /// When the fence expires, in seconds since 1970; `+infinity` when it never does.
    public var expiry: Double
    /// The fence's own dwell time in seconds, or NaN when it sets none.
    public var dwellTime: Double
    /// The events the fence reports.
    public var events: GeofenceEventKinds

    /// An empty slot.
    public static let empty = SlotTraits(exists: false, expiry: -.infinity, dwellTime: .nan, events: [])

    @usableFromInline
    init(exists: Bool, expiry: Double, dwellTime: Double, events: GeofenceEventKinds) {
        self.exists = exists
        self.expiry = expiry
        self.dwellTime = dwellTime
        self.events = events
    }

    /// The traits of `fence`.
    public init(_ fence: Fence) {
        self.init(exists: true, expiry: fence.expiresAt?.timeIntervalSince1970 ?? .infinity,
                  dwellTime: fence.dwellTime ?? .nan, events: fence.events)
    }

    /// The fence's dwell time, or `fallback` when it sets none.
    @inlinable
    public func dwellTime(or fallback: Double?) -> Double? {
        dwellTime.isNaN ? fallback : dwellTime
    }

    /// The fence's dwell time, or `fallback` when it sets none (`.infinity`: never due).
    @inlinable
    public func dwellTime(or fallback: Double) -> Double {
        dwellTime.isNaN ? fallback : dwellTime
    }
}
