import PerimeterFences

/// Finding the fence of an event without hashing its id.
///
/// An event the engine made records its fence's slot (``GeofenceEvent/fenceSlot``); a caller that names
/// the fence of every event it logs (a service copying the fence's name, group and properties into its
/// log) can keep what it needs per slot and find it by that number. The slot is checked against the
/// event's fence id, so an event from another engine, or one read back from a store, is never matched to
/// the wrong fence: it has no usable slot, and the caller falls back to the id.
extension ShardedEngine {
    /// The slot of `event`'s fence in this engine's first shard: the slot the event records, when that
    /// slot holds a fence with the event's fence id; `nil` otherwise (no slot recorded, or the slot is
    /// now empty or holds another fence). A fence in slot `s` with id `x` is the one ``fence(id:)`` gives
    /// for `x` (ids are unique in a fence set), so the two ways of finding it agree.
    ///
    /// `mutating` only to reach the shard where it lies (as ``fenceInPlace(id:)``): the engine is not
    /// changed.
    /// - Complexity: O(1), no hashing; copies the fence id alone.
    public mutating func fenceSlot(of event: GeofenceEvent) -> FenceSet.Slot? {
        shards[0].fenceSlotInPlace(of: event)
    }

    /// The fence in `slot` of the first shard (`nil` for an emptied or unknown slot): for a slot
    /// ``fenceSlot(of:)`` gave, the fence ``fenceInPlace(id:)`` gives for the event's fence id, found
    /// without hashing the id. `mutating` only to reach the shard where it lies: the engine is not changed.
    public mutating func fenceInPlace(slot: FenceSet.Slot) -> Fence? {
        shards[0].fenceInPlace(slot: slot)
    }
}

extension DetectionEngine {
    /// ``ShardedEngine/fenceInPlace(slot:)`` on the engine where it lies.
    @inline(__always)
    mutating func fenceInPlace(slot: FenceSet.Slot) -> Fence? { fences[slot: slot] }

    /// ``ShardedEngine/fenceSlot(of:)`` on the engine where it lies (an element of an array of engines).
    @inline(__always)
    mutating func fenceSlotInPlace(of event: GeofenceEvent) -> FenceSet.Slot? {
        let slot = event.fenceSlot.slot
        guard slot >= 0, fences.id(ofSlot: slot) == event.fence else { return nil }
        return slot
    }
}
