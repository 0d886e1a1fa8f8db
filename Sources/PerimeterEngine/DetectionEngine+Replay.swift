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
        // One stream per device, in input order.
        var streamOf: [DeviceID: Int] = [:]
        var streams: [[Int]] = []
        for (index, update) in updates.enumerated() {
            if let s = streamOf[update.device] {
                streams[s].append(index)
            } else {
                streamOf[update.device] = streams.count
                streams.append([index])
            }
        }
        // A min-heap of stream heads keyed by (time, stream).
        var heads = MinHeap<StreamHead>()
        var positions = Array(repeating: 0, count: streams.count)
        for s in streams.indices { heads.push(StreamHead(time: updates[streams[s][0]].time.timeIntervalSince1970, stream: s)) }

        var events: [GeofenceEvent] = []
        var rejections: [Rejection] = []
        var done = 0
        while let head = heads.pop() {
            let s = head.stream
            let update = updates[streams[s][positions[s]]]
            advance(to: update.time, into: &events)
            if let rejection = process(update, into: &events) { rejections.append(rejection) }
            positions[s] += 1
            if positions[s] < streams[s].count {
                heads.push(StreamHead(time: updates[streams[s][positions[s]]].time.timeIntervalSince1970, stream: s))
            }
            done += 1
            if let progress, done % 4096 == 0 { progress(done) }
        }
        flush(into: &events)  // updates still in a reorder window are input, not timers: process them
        progress?(updates.count)
        return ReplayResult(events: events, rejections: rejections)
    }
}

/// The next update of one device's stream; NaN times sort first so they are met (and rejected) early.
private struct StreamHead: HeapElement {
    var time: Double
    var stream: Int

    static func precedes(_ a: StreamHead, _ b: StreamHead) -> Bool {
        let (x, y) = (a.time.isNaN ? -Double.infinity : a.time, b.time.isNaN ? -Double.infinity : b.time)
        return x < y || (x == y && a.stream < b.stream)
    }
}
