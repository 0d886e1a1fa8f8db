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
    ///
    /// `mutating` only to reach the engine where it lies: the engine is not changed. (The one body it
    /// shares with ``ShardedEngine/writeCommitSnapshot(of:handle:since:into:)`` is mutating: as a
    /// non-mutating method inlined into a mutating caller, it copied the whole engine value, 568 bytes,
    /// per device.)
    /// - Complexity: O(1) plus O(k) to compare k memberships; O(k log k) when they changed (as
    ///   ``snapshot(of:)``).
    public mutating func commitSnapshot(of device: DeviceID, since stamp: PresenceStamp?) -> CommitSnapshot? {
        guard let slot = slot(of: device) else { return nil }
        return commitSnapshot(ofSlot: slot, since: stamp)
    }

    /// ``commitSnapshot(of:since:)`` found through `handle` (see ``DeviceHandle``): a caller that keeps
    /// one handle per device between commits skips hashing the id. The handle is checked, and corrected
    /// when it does not name the device's slot, as in ``process(_:handle:into:)``.
    public mutating func commitSnapshot(of device: DeviceID, handle: inout DeviceHandle, since stamp: PresenceStamp?) -> CommitSnapshot? {
        guard let slot = slot(of: device, handle: &handle) else { return nil }
        return commitSnapshot(ofSlot: slot, since: stamp)
    }

    /// ``commitSnapshot(of:since:)`` of the device in `slot`: the in-place body written into a blank
    /// snapshot, whose empty memberships are what an unchanged presence leaves.
    private mutating func commitSnapshot(ofSlot slot: Int32, since stamp: PresenceStamp?) -> CommitSnapshot {
        var snapshot = DeviceSnapshot.unwritten(device: devices[Int(slot)].id, memberships: [])
        let written = writeCommitSnapshot(ofSlot: slot, since: stamp, into: &snapshot)
        return CommitSnapshot(snapshot: consume snapshot, presenceUnchanged: written.presenceUnchanged, stamp: written.stamp)
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
    /// (checked, and corrected when it does not name the device's slot there): the state
    /// ``writeCommitSnapshot(of:handle:since:into:)`` writes, into a blank snapshot.
    public mutating func commitSnapshot(of device: DeviceID, handle: inout DeviceHandle,
                                        since stamp: DetectionEngine.PresenceStamp?) -> DetectionEngine.CommitSnapshot? {
        var snapshot = DetectionEngine.DeviceSnapshot.unwritten(device: device, memberships: [])
        guard let written = writeCommitSnapshot(of: device, handle: &handle, since: stamp, into: &snapshot) else { return nil }
        return DetectionEngine.CommitSnapshot(snapshot: consume snapshot, presenceUnchanged: written.presenceUnchanged,
                                              stamp: written.stamp)
    }
}
