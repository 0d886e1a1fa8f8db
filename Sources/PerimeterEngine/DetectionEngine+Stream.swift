import Foundation
import PerimeterFences
import PerimeterGeometry

/// The device-stream front end: duplicate suppression and the reorder window (engine-wide options,
/// applied before any fence is looked at).
extension DetectionEngine {
    /// Takes a validated update of the device in `deviceSlot` through duplicate suppression and the
    /// reorder window.
    /// `date` is the update's time as given, `t` the same in seconds since 1970.
    mutating func intake(_ device: DeviceID, deviceSlot: Int32, date: Date, time t: Double, coordinate: Coordinate,
                         accuracy: Double?, into events: inout [GeofenceEvent]) -> Rejection? {
        var stream = streamStates[deviceSlot] ?? DeviceStreamState()
        let identity = UpdateIdentity(time: t, coordinate: coordinate)
        if configuration.deduplicate, stream.recentSet.contains(identity) {
            statistics.duplicateUpdates += 1
            return nil
        }
        let last = devices[Int(deviceSlot)].lastTime
        if t < last {
            statistics.rejectedUpdates += 1
            return .outOfOrder(device: device, time: date, lastAccepted: Date(timeIntervalSince1970: last))
        }
        if configuration.deduplicate { stream.remember(identity) }
        let window = configuration.reorderWindow
        guard window > 0 else {
            streamStates[deviceSlot] = stream
            accept(deviceSlot, time: t, coordinate: coordinate, accuracy: accuracy, into: &events)
            return nil
        }
        arrivals &+= 1
        let waiting = BufferedUpdate(time: t, coordinate: coordinate, accuracy: accuracy, arrival: arrivals)
        let at = stream.buffer.lastIndex(where: { $0.time <= t }).map { $0 + 1 } ?? 0
        stream.buffer.insert(waiting, at: at)
        stream.newest = max(stream.newest, t)
        streamStates[deviceSlot] = stream
        release(deviceSlot, upTo: stream.newest - window, into: &events)
        scheduleRelease(deviceSlot)
        return nil
    }

    /// Evaluates an accepted update on whichever path the engine uses.
    mutating func accept(_ deviceSlot: Int32, time t: Double, coordinate: Coordinate, accuracy: Double?,
                         into events: inout [GeofenceEvent]) {
        statistics.acceptedUpdates += 1
        if usesOptions {
            evaluateWithOptions(deviceSlot: deviceSlot, time: t, coordinate: coordinate, accuracy: accuracy, into: &events)
        } else {
            fences.slots(containing: coordinate, into: &scratch)
            evaluate(deviceSlot: deviceSlot, time: t, coordinate: coordinate, into: &events)
        }
    }

    /// Processes one device's buffered updates up to `limit`, in time order, and keeps its release timer.
    mutating func releaseBuffered(_ deviceSlot: Int32, upTo limit: Double, into events: inout [GeofenceEvent]) {
        guard let first = streamStates[deviceSlot]?.buffer.first, first.time <= limit else { return }
        release(deviceSlot, upTo: limit, into: &events)
        scheduleRelease(deviceSlot)
    }

    /// Processes one device's buffered updates up to `limit`, in time order.
    private mutating func release(_ deviceSlot: Int32, upTo limit: Double, into events: inout [GeofenceEvent]) {
        while let first = streamStates[deviceSlot]?.buffer.first, first.time <= limit {
            streamStates[deviceSlot]?.buffer.removeFirst()
            accept(deviceSlot, time: first.time, coordinate: first.coordinate, accuracy: first.accuracy, into: &events)
        }
    }

    /// Processes every device's buffered updates up to `limit`, in order of time, then arrival; the
    /// `held` devices' updates keep waiting.
    mutating func releaseBuffered(upTo limit: Double, holding held: Set<Int32> = [], into events: inout [GeofenceEvent]) {
        var devices = popReleaseTimers(upTo: limit)
        if !held.isEmpty {
            for device in devices where held.contains(device) { scheduleRelease(device) }
            devices.removeAll { held.contains($0) }
        }
        guard !devices.isEmpty else { return }
        var due: [(time: Double, arrival: UInt64, device: Int32)] = []
        for device in devices {
            for waiting in streamStates[device]?.buffer ?? [] where waiting.time <= limit {
                due.append((waiting.time, waiting.arrival, device))
            }
        }
        due.sort { ($0.time, $0.arrival) < ($1.time, $1.arrival) }
        for item in due { release(item.device, upTo: item.time, into: &events) }
        for device in devices { scheduleRelease(device) }
    }

    /// Makes sure a release timer surfaces `device` once the clock may release its earliest buffered
    /// update (invariant: a device with buffered updates has a timer due no later than the first).
    mutating func scheduleRelease(_ device: Int32) {
        guard let first = streamStates[device]?.buffer.first else { return }
        if let scheduled = streamStates[device]?.releaseDue, scheduled <= first.time { return }
        streamStates[device]?.releaseDue = first.time
        releaseTimers.push(DeviceTimer(due: first.time, device: device))
    }

    /// Pops the release timers due by `limit` and returns, once each, the devices that have buffered
    /// updates up to `limit`; the others (stale timers) are rescheduled. The caller must release the
    /// returned devices or reschedule them.
    /// - Complexity: O(k log n) for k due timers among n.
    mutating func popReleaseTimers(upTo limit: Double) -> [Int32] {
        guard let head = releaseTimers.first, head.due <= limit else { return [] }
        var popped: [Int32] = []
        while let next = releaseTimers.first, next.due <= limit, let timer = releaseTimers.pop() {
            if streamStates[timer.device]?.releaseDue == timer.due { streamStates[timer.device]?.releaseDue = nil }
            popped.append(timer.device)
        }
        var seen = Set<Int32>()
        var due: [Int32] = []
        for device in popped where seen.insert(device).inserted {
            if let first = streamStates[device]?.buffer.first, first.time <= limit {
                due.append(device)
            } else {
                scheduleRelease(device)
            }
        }
        return due
    }

    /// Processes every update still waiting in a reorder window (end of input), in time order.
    /// Does nothing when the reorder window is off.
    public mutating func flush(into events: inout [GeofenceEvent]) {
        releaseBuffered(upTo: .infinity, into: &events)
    }

    /// Processes every update still waiting in a reorder window and returns the events.
    public mutating func flush() -> [GeofenceEvent] {
        var events: [GeofenceEvent] = []
        flush(into: &events)
        return events
    }

    /// The number of updates waiting in reorder windows.
    public var bufferedUpdateCount: Int { streamStates.values.reduce(0) { $0 + $1.buffer.count } }
}
