import Foundation

extension DetectionEngine {
    /// What a replay produced.
    public struct ReplayResult: Sendable {
        /// Every event, in the order the engine emitted them (time order; see ``DetectionEngine/replay(_:progress:)``).
        public var events: [GeofenceEvent]
        /// Every rejected update, in the order it was met.
        public var rejections: [Rejection]
    }

    /// Feeds recorded updates of any number of devices through the engine, merged in time order.
    ///
    /// Each device's updates keep their input order (its arrival order): the devices' sequences are
    /// merged by the time of their next update (ties go to the device seen first), as if they had arrived
    /// live. An update older than its device's previous one is therefore still rejected, as it would be
    /// live. Before each update the clock is advanced to its time, so dwells that fall due between the
    /// updates of other devices come out at their own time. Updates still waiting in a reorder window at
    /// the end are processed; no timer fires after the last update: call ``advance(to:into:)`` for that.
    ///
    /// - Parameter progress: called now and then with the number of updates processed so far.
    /// - Complexity: O(n log d) for n updates of d devices, plus the cost of each update.
    public mutating func replay(_ updates: [LocationUpdate], progress: ((Int) -> Void)? = nil) -> ReplayResult {
        var events: [GeofenceEvent] = []
        var rejections: [Rejection] = []
        for (done, index) in Self.replayOrder(updates).enumerated() {
            let update = updates[Int(index)]
            advance(to: update.time, into: &events)
            if let rejection = process(update, into: &events) { rejections.append(rejection) }
            if let progress, (done + 1) % 4096 == 0 { progress(done + 1) }
        }
        flush(into: &events)  // updates still in a reorder window are input, not timers: process them
        progress?(updates.count)
        return ReplayResult(events: events, rejections: rejections)
    }
}

extension DetectionEngine {
    /// The order in which ``replay(_:progress:)`` meets `updates` (positions in `updates`): the devices'
    /// sequences, each in input order, merged by the time of their next update, ties to the device seen
    /// first, NaN times first (so they are met, and rejected, early). ``ShardedEngine`` replays in the
    /// same order.
    /// - Complexity: O(n log d) for n updates of d devices.
    static func replayOrder(_ updates: [LocationUpdate]) -> [Int32] {
        var streamOf: [DeviceID: Int] = [:]
        var streams: [[Int32]] = []
        for (index, update) in updates.enumerated() {
            if let s = streamOf[update.device] {
                streams[s].append(Int32(index))
            } else {
                streamOf[update.device] = streams.count
                streams.append([Int32(index)])
            }
        }
        func key(_ index: Int32) -> Double {
            let t = updates[Int(index)].time.timeIntervalSince1970
            return t.isNaN ? -.infinity : t
        }
        var heads = MinHeap<StreamHead>()
        for s in streams.indices { heads.push(StreamHead(time: key(streams[s][0]), stream: s)) }
        var positions = [Int](repeating: 0, count: streams.count)
        var order: [Int32] = []
        order.reserveCapacity(updates.count)
        while let head = heads.pop() {
            let s = head.stream
            order.append(streams[s][positions[s]])
            positions[s] += 1
            if positions[s] < streams[s].count { heads.push(StreamHead(time: key(streams[s][positions[s]]), stream: s)) }
        }
        return order
    }
}

/// The next update of one device's stream, keyed by its time (NaN already mapped to −∞) and stream.
private struct StreamHead: HeapElement {
    var time: Double
    var stream: Int

    static func precedes(_ a: StreamHead, _ b: StreamHead) -> Bool {
        a.time < b.time || (a.time == b.time && a.stream < b.stream)
    }
}
