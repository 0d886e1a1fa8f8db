import Foundation

/// The data clock's batch: a run of updates, each preceded by every device's timers due by its time.
///
/// A service on the data clock (docs/service.md, `timeModel: .data`) handles each update as a replay
/// does: first ``DetectionEngine/advance(to:into:)`` to the update's time, when
/// ``DetectionEngine/devicesWithDwellsDue(by:)`` says something is due, then the update. Done one engine
/// call at a time, the look for timers due, the engine's entry point and the service's bookkeeping of
/// which devices changed cost more than the update itself. ``DetectionEngine/processOnDataClock(_:clockOnly:)``
/// does the same in one call: the look is skipped while no timer is pending, and the devices the batch
/// changed come back once each instead of once per update.
extension DetectionEngine {
    /// What ``processOnDataClock(_:clockOnly:)`` did.
    public struct DataClockOutput: Sendable {
        /// The events, in the order the one-call-per-update loop appends them: before each update the
        /// timers due by its time (``advance(to:into:)``'s order), then the update's own.
        public var events: [GeofenceEvent] = []
        /// The updates the engine rejected: their positions in the batch and why, in batch order.
        public var rejections: [(index: Int, rejection: Rejection)] = []
        /// The devices whose state the batch may have changed, in the order the loop first changes them:
        /// before an update, the devices ``devicesWithDwellsDue(by:)`` names (in its order); then the
        /// update's device when the engine accepts the update. A device accepted several times is listed
        /// at its first acceptance only; one named by the clock may be listed again (marking a device
        /// changed twice is marking it once).
        public var changedDevices: [DeviceID] = []
        /// From one engine (not a ``ShardedEngine`` of several shards): beside each of ``changedDevices``,
        /// the device's slot there, or -1 when not at hand — for a caller that keeps its own per-device
        /// records by slot (a ``DeviceHandle`` made from it names the device in this engine). Empty
        /// otherwise.
        public var changedDeviceSlots: [Int32] = []

        /// An empty output.
        public init() {}
    }

    /// Processes `updates` in order on the data clock, exactly as this loop would, with one call:
    ///
    /// ```swift
    /// for (i, update) in updates.enumerated() {
    ///     let due = engine.devicesWithDwellsDue(by: update.time)
    ///     if !due.isEmpty { changed += due; engine.advance(to: update.time, into: &events) }
    ///     if clockOnly.contains(i) { continue }
    ///     if let rejection = engine.process(update, into: &events) { rejections.append((i, rejection)) }
    ///     else { changed.append(update.device) }
    /// }
    /// ```
    ///
    /// - Parameter clockOnly: ascending positions of updates the caller refused (a service's accuracy
    ///   limit): the clock still moves to their time, but the engine does not see them.
    /// - Complexity: the updates' own cost, plus ``devicesWithDwellsDue(by:)`` per update while some
    ///   timer is pending (O(1) when none is due; nothing at all when no timer is pending), and one bit per
    ///   accepted update (the slot the engine resolved) to list the changed devices once each.
    public mutating func processOnDataClock(_ updates: UnsafeBufferPointer<LocationUpdate>,
                                            clockOnly: [Int] = []) -> DataClockOutput {
        var output = DataClockOutput()
        guard !updates.isEmpty else { return output }
        prepareIndex()
        // One bit per device slot: set once the device is listed as changed by an update of this batch.
        var listed = [UInt64](repeating: 0, count: devices.count / 64 + 1)
        var skip = 0
        let first = updates.baseAddress!
        for i in updates.indices {
            // Read in place, its id by address (``process(updateAt:handle:into:)``):
            // a copy of the update retained and released its id. The id is copied only to be listed.
            let update = first + i
            let time = update.pointee.time
            if mayHaveTimersDue(by: time.timeIntervalSince1970) {
                // The look itself, as the loop makes it: it takes the due timers out of their heap and
                // puts them back, and the order it names devices in depends on how the heap lies.
                let due = devicesWithDwellsDue(by: time)
                if !due.isEmpty {
                    output.changedDevices += due
                    output.changedDeviceSlots += repeatElement(-1, count: due.count)
                    advance(to: time, into: &output.events)
                }
            }
            if skip < clockOnly.count, clockOnly[skip] == i {
                skip += 1
                continue
            }
            // A fresh handle: the engine resolves it to the device's slot, so listing the device needs no
            // second look-up of its id.
            var handle = DeviceHandle()
            if let rejection = process(updateAt: update, handle: &handle, into: &output.events) {
                output.rejections.append((i, rejection))
                continue
            }
            guard handle.isResolved else {
                output.changedDevices.append(update.pointee.device)
                output.changedDeviceSlots.append(-1)
                continue
            }
            let slot = Int(handle.slot)
            let word = slot >> 6, bit = UInt64(1) << UInt64(slot & 63)
            if word >= listed.count { listed += repeatElement(0, count: word - listed.count + 1) }
            if listed[word] & bit == 0 {
                listed[word] |= bit
                output.changedDevices.append(update.pointee.device)
                output.changedDeviceSlots.append(handle.slot)
            }
        }
        return output
    }

    /// Whether ``devicesWithDwellsDue(by:)`` may name a device for `now` (seconds since 1970): `false`
    /// only when it certainly names none. O(1), and it leaves the timers as they lie: with dwell timers
    /// pending the answer is "may" (only taking the earliest out of its heap would tell, and putting it
    /// back would change the order in which equal times come out).
    @inline(__always)
    func mayHaveTimersDue(by now: Double) -> Bool {
        guard now.isFinite else { return false }
        if configuration.reorderWindow > 0 || timers.count > 0 { return true }
        if usesOptions, let first = optionTimers.first, first.due <= now { return true }
        return false
    }
}

extension ShardedEngine {
    /// ``DetectionEngine/processOnDataClock(_:clockOnly:)`` on the sharded engine: the events,
    /// rejections and changed devices one engine gives for the same loop, with
    /// ``devicesWithDwellsDue(by:)`` and ``advance(to:into:)`` over every shard (events merged as
    /// ``advance(to:into:)`` merges them). One shard runs the engine's batch; several run that loop one
    /// update at a time (the data clock moves every shard at every update, so the shards cannot run
    /// apart).
    public mutating func processOnDataClock(_ updates: UnsafeBufferPointer<LocationUpdate>,
                                            clockOnly: [Int] = []) -> DetectionEngine.DataClockOutput {
        shareFenceIndex()
        if shards.count == 1 { return shards[0].processOnDataClock(updates, clockOnly: clockOnly) }
        var output = DetectionEngine.DataClockOutput()
        var skip = 0
        for i in updates.indices {
            let time = updates[i].time
            let due = devicesWithDwellsDue(by: time)
            if !due.isEmpty {
                output.changedDevices += due
                advance(to: time, into: &output.events)
            }
            if skip < clockOnly.count, clockOnly[skip] == i {
                skip += 1
                continue
            }
            if let rejection = process(updates[i], into: &output.events) {
                output.rejections.append((i, rejection))
            } else {
                output.changedDevices.append(updates[i].device)
            }
        }
        return output
    }
}
