import Foundation
import PerimeterFences

/// A device's state for a store's commit, telling cheaply whether its presence changed since the last one.
///
/// A store rewrites the presence of a device only when it changed. Telling that from two
/// ``DetectionEngine/DeviceSnapshot``s means building the device's memberships by fence id (an id copied
/// and the list sorted by id for each) and comparing them id by id, at every commit for every device
/// that moved. ``DetectionEngine/PresenceStamp`` keeps the engine's own list instead — fence slots and
/// visit numbers, no strings — and ``DetectionEngine/commitSnapshot(of:since:)`` compares against it and
/// builds the memberships only when they differ.
extension DetectionEngine {
    /// The fences a device was inside at one moment, as the engine holds them (by fence slot): compared
    /// with the device's presence later in O(k) for k fences, without fence ids.
    ///
    /// A stamp compares fence *slots*, so it is only meaningful in the engine it came from while no
    /// fence was removed or replaced since: a holder drops its stamps when the fences change (an
    /// equal stamp then says nothing of the ids).
    public struct PresenceStamp: Sendable {
        /// The device's memberships when the stamp was taken (a copy: the engine keeps every device's
        /// list in one pool, edited in place).
        let inside: [Membership]

        /// Whether `list` in `pool` is the same presence: same fences, same visits, same dwell state.
        func isSame(as list: PresencePool.List, in pool: PresencePool) -> Bool {
            guard inside.count == pool.count(list) else { return false }
            for i in inside.indices where inside[i] != pool[list, i] { return false }
            return true
        }
    }

    /// What ``commitSnapshot(of:since:)`` gives.
    public struct CommitSnapshot: Sendable {
        /// The device's state; its ``DeviceSnapshot/memberships`` are empty when ``presenceUnchanged``
        /// (the caller holds them already).
        public var snapshot: DeviceSnapshot
        /// Whether the presence is the one `since` stamped (then ``snapshot`` carries no memberships).
        public var presenceUnchanged: Bool
        /// The device's presence now, for the next call.
        public var stamp: PresenceStamp
    }

    /// The state of `device` as ``snapshot(of:)`` gives it, except that the memberships are left out
    /// when they are those `since` stamped; `nil` when the device sent no accepted update.
    /// - Complexity: O(1) plus O(k) to compare k memberships; O(k log k) when they changed (as
    ///   ``snapshot(of:)``).
    public func commitSnapshot(of device: DeviceID, since stamp: PresenceStamp?) -> CommitSnapshot? {
        guard let slot = slot(of: device) else { return nil }
        return commitSnapshot(ofSlot: slot, since: stamp)
    }

    /// ``commitSnapshot(of:since:)`` found through `handle` (see ``DeviceHandle``): a caller that keeps
    /// one handle per device between commits skips hashing the id. The handle is checked, and corrected
    /// when it does not name the device's slot, as in ``process(_:handle:into:)``.
    public func commitSnapshot(of device: DeviceID, handle: inout DeviceHandle, since stamp: PresenceStamp?) -> CommitSnapshot? {
        if holds(handle, device) { return commitSnapshot(ofSlot: handle.slot, since: stamp) }
        guard let slot = slot(of: device) else { return nil }
        handle = DeviceHandle(slot: slot)
        return commitSnapshot(ofSlot: slot, since: stamp)
    }

    /// ``commitSnapshot(of:since:)`` of the device in `slot`.
    private func commitSnapshot(ofSlot slot: Int32, since stamp: PresenceStamp?) -> CommitSnapshot {
        let d = Int(slot)
        let presence = devices[d].presence
        // An unchanged presence keeps the stamp it was compared with (equal lists): no copy, no allocation.
        let unchanged = stamp?.isSame(as: presence, in: presencePool) ?? false
        let newStamp = unchanged ? stamp! : PresenceStamp(inside: presencePool.members(presence))
        let memberships = unchanged || newStamp.inside.isEmpty ? [] : membershipSnapshots(of: newStamp.inside)
        let instant = instantVisits.isEmpty ? [] : instantVisitSnapshots(of: instantVisits[slot] ?? [])
        let options = optionStates.isEmpty ? nil : optionStates[slot].map { optionSnapshot($0) }
        let stream = streamStates.isEmpty ? nil : streamStates[slot].map { streamSnapshot($0) }
        let snapshot = DeviceSnapshot(device: devices[d].id, lastTime: devices[d].lastTime,
                                      lastCoordinate: devices[d].lastCoordinate, updateCount: updateCount(ofSlot: d),
                                      memberships: memberships, instantVisits: instant, options: options, stream: stream)
        // Moved into the result: else the compiler copied it (every reference retained) and destroyed it.
        return CommitSnapshot(snapshot: consume snapshot, presenceUnchanged: unchanged, stamp: newStamp)
    }
}

extension ShardedEngine {
    /// ``DetectionEngine/commitSnapshot(of:since:)`` of `device`'s shard, its sequences on the engine-wide
    /// scale (as ``snapshot(of:)``). `mutating` only to reach the shard where it lies: the engine is not
    /// changed. (Called as a non-mutating method on `shards[s]`, the compiler copied the whole shard —
    /// every table retained and released — which cost more than the snapshot itself.)
    public mutating func commitSnapshot(of device: DeviceID, since stamp: DetectionEngine.PresenceStamp?) -> DetectionEngine.CommitSnapshot? {
        var handle = DeviceHandle()
        return commitSnapshot(of: device, handle: &handle, since: stamp)
    }

    /// ``commitSnapshot(of:since:)`` found through `handle`, a ``DeviceHandle`` of the device's shard
    /// (checked, and corrected when it does not name the device's slot there).
    public mutating func commitSnapshot(of device: DeviceID, handle: inout DeviceHandle,
                                        since stamp: DetectionEngine.PresenceStamp?) -> DetectionEngine.CommitSnapshot? {
        // One shard: its result as it is (held in a variable and returned, it was copied and destroyed).
        if shards.count == 1 { return shards[0].commitSnapshotInPlace(of: device, handle: &handle, since: stamp) }
        let s = shard(of: device)
        guard var result = shards[s].commitSnapshotInPlace(of: device, handle: &handle, since: stamp) else { return nil }
        // Option state names a sequence that is the shard's own with several shards: take it from the
        // snapshot that moves it to the engine-wide scale (rare: options with more than one shard).
        if result.snapshot.options != nil, let global = snapshot(of: device) {
            result.snapshot.options = global.options
        }
        return result
    }
}

extension DetectionEngine {
    /// ``commitSnapshot(of:handle:since:)`` on the engine where it lies (an element of an array of
    /// engines): the engine is not changed.
    @inline(__always)
    mutating func commitSnapshotInPlace(of device: DeviceID, handle: inout DeviceHandle, since stamp: PresenceStamp?) -> CommitSnapshot? {
        commitSnapshot(of: device, handle: &handle, since: stamp)
    }
}
