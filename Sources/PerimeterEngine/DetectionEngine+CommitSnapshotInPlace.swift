import PerimeterFences
import PerimeterGeometry

/// ``DetectionEngine/commitSnapshot(of:handle:since:)`` written where the caller keeps it.
///
/// A commit lists one ``DetectionEngine/DeviceSnapshot`` per changed device. Returned by value, the
/// snapshot was built, moved into a ``DetectionEngine/CommitSnapshot``, returned through two calls, then
/// copied into the caller's list (every reference in it retained) and the returned value destroyed (every
/// reference released): for a value this large the compiler does not forward it into the list. Here the
/// caller appends its entry first and the engine writes the device's state into it in place.
extension DetectionEngine {
    /// What ``ShardedEngine/writeCommitSnapshot(of:handle:since:into:)`` tells beside the snapshot it wrote.
    public struct CommitSnapshotWritten: Sendable {
        /// Whether the presence is the one `since` stamped (then the memberships were not written).
        public var presenceUnchanged: Bool
        /// The device's presence now, for the next call.
        public var stamp: PresenceStamp
    }

    /// ``commitSnapshot(of:handle:since:)``'s snapshot written into `snapshot`: every field, except the
    /// memberships when the presence is the one `since` stamped (they are left as they were); `nil` (and
    /// `snapshot` unchanged) when the device sent no accepted update. `handle` is checked and corrected
    /// as there. `mutating` only to reach the engine where it lies (an element of an array of engines)
    /// without copying it: the engine is not changed.
    @inline(__always)
    mutating func writeCommitSnapshotInPlace(of device: DeviceID, handle: inout DeviceHandle, since stamp: PresenceStamp?,
                                             into snapshot: inout DeviceSnapshot) -> CommitSnapshotWritten? {
        guard let slot = slot(of: device, handle: &handle) else { return nil }
        return writeCommitSnapshot(ofSlot: slot, since: stamp, into: &snapshot)
    }

    /// The slot of `device` through `handle`: the handle's when it names the device's live slot, else
    /// the one found by id (and `handle` set to it); `nil` when the engine does not know the device. A
    /// stale handle costs one look-up, never a wrong device.
    @inline(__always)
    func slot(of device: DeviceID, handle: inout DeviceHandle) -> Int32? {
        if holds(handle, device) { return handle.slot }
        guard let slot = slot(of: device) else { return nil }
        handle = DeviceHandle(slot: slot)
        return slot
    }

    /// The one body of both commit snapshots, the one written in place and the one returned
    /// (``commitSnapshot(of:since:)`` writes into a blank snapshot): the state of the device in `slot`
    /// written into `snapshot`, the memberships only when the presence is not the one `since` stamped.
    /// Inlined into both callers, so that neither pays a call for sharing it. `mutating` only to read
    /// the engine where it lies: non-mutating, it was inlined with a copy of the whole engine value
    /// (568 bytes) per device. The engine is not changed.
    @inline(__always)
    mutating func writeCommitSnapshot(ofSlot slot: Int32, since stamp: PresenceStamp?,
                             into snapshot: inout DeviceSnapshot) -> CommitSnapshotWritten {
        let d = Int(slot)
        let presence = devices[d].presence
        // An unchanged presence keeps the stamp it was compared with (equal lists): no copy, no allocation.
        let unchanged = stamp?.isSame(as: presence, in: presencePool) ?? false
        let newStamp = unchanged ? stamp! : PresenceStamp(inside: presencePool.members(presence))
        // A snapshot written over is usually this device's last one (the in-memory store's entry): what
        // it already holds — the same id, no instant visits, no option or stream state — is left, not
        // assigned again (each assignment retained the new value and released the old).
        if snapshot.device != devices[d].id { snapshot.device = devices[d].id }
        snapshot.lastTime = devices[d].lastTime
        snapshot.lastCoordinate = devices[d].lastCoordinate
        snapshot.updateCount = updateCount(ofSlot: d)
        if !unchanged { snapshot.memberships = newStamp.inside.isEmpty ? [] : membershipSnapshots(of: newStamp.inside) }
        if !instantVisits.isEmpty {
            snapshot.instantVisits = instantVisitSnapshots(of: instantVisits[slot] ?? [])
        } else if !snapshot.instantVisits.isEmpty {
            snapshot.instantVisits = []
        }
        if !optionStates.isEmpty {
            snapshot.options = optionStates[slot].map { optionSnapshot($0) }
        } else if case .some = snapshot.options {
            snapshot.options = nil
        }
        if !streamStates.isEmpty {
            snapshot.stream = streamStates[slot].map { streamSnapshot($0) }
        } else if case .some = snapshot.stream {
            snapshot.stream = nil
        }
        return CommitSnapshotWritten(presenceUnchanged: unchanged, stamp: newStamp)
    }
}

extension ShardedEngine {
    /// ``commitSnapshot(of:handle:since:)`` written into `snapshot` in place: every field of the device's
    /// state, except the memberships when the presence is the one `since` stamped (left as they were:
    /// the caller holds them); `nil`, and `snapshot` unchanged, when the device sent no accepted update.
    /// Sequences are on the engine-wide scale, as ``snapshot(of:)`` gives them.
    ///
    /// `mutating` only to reach the device's shard where it lies: the engine is not changed.
    /// - Complexity: as ``commitSnapshot(of:handle:since:)``, without building a snapshot and copying it.
    public mutating func writeCommitSnapshot(of device: DeviceID, handle: inout DeviceHandle,
                                             since stamp: DetectionEngine.PresenceStamp?,
                                             into snapshot: inout DetectionEngine.DeviceSnapshot) -> DetectionEngine.CommitSnapshotWritten? {
        if shards.count == 1 { return shards[0].writeCommitSnapshotInPlace(of: device, handle: &handle, since: stamp, into: &snapshot) }
        let s = shard(of: device)
        guard let written = shards[s].writeCommitSnapshotInPlace(of: device, handle: &handle, since: stamp, into: &snapshot) else {
            return nil
        }
        // Option state names a sequence that is the shard's own with several shards: take it from the
        // snapshot that moves it to the engine-wide scale (rare: options with more than one shard).
        if snapshot.options != nil, let global = self.snapshot(of: device) {
            snapshot.options = global.options
        }
        return written
    }
}

extension DetectionEngine.DeviceSnapshot {
    /// A snapshot of `device` for ``ShardedEngine/writeCommitSnapshot(of:handle:since:into:)`` to write:
    /// no update, the position 0° 0°, and `memberships` (which that call keeps when the presence is the
    /// one stamped).
    public static func unwritten(device: DeviceID, memberships: [DetectionEngine.MembershipSnapshot]) -> Self {
        Self(device: device, lastTime: 0, lastCoordinate: Coordinate(latitude: 0, longitude: 0), updateCount: 0,
             memberships: memberships)
    }
}
