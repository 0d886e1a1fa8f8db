import Foundation
import PerimeterFences
import PerimeterGeometry

/// The batch path of ``ShardedEngine``: partition, run the shards, merge.
///
/// Its cost beside the engines' own is kept to a few per cent of one engine's, so that N shards cost
/// about the CPU time of one (docs/benchmarks.md, "Shards"):
/// - the batch is read in place (no copy of a `LocationUpdate`; a non-contiguous collection is copied
///   once); the partition is one FNV hash per update and a counting sort of the update positions into
///   one flat array;
/// - each shard appends to buffers of its own kept between batches (events, and only for the updates
///   that caused events, where each one's events end), and reads the fence index ahead of its next
///   updates as ``DetectionEngine/process(contentsOf:into:)`` does;
/// - the merge walks only the updates that caused events, taking each shard's next one by batch
///   position: O(e log N) for e events of N shards, each event copied once into the result.
extension ShardedEngine {
    /// Where one update's events end in its shard's event buffer.
    struct EventMark {
        /// The update's position in the batch.
        var update: Int32
        /// One past its last event in the shard's buffer.
        var end: Int32
    }

    /// One shard's part of a batch.
    struct ShardOutput: Sendable {
        var events: [GeofenceEvent] = []
        /// In batch order; only updates that caused events.
        var marks: [EventMark] = []
        var rejections: [(index: Int, rejection: DetectionEngine.Rejection)] = []
        var timerEventIndices: [Int] = []

        /// Empties the buffers, keeping their capacity for the next batch.
        mutating func reset() {
            events.removeAll(keepingCapacity: true)
            marks.removeAll(keepingCapacity: true)
            rejections.removeAll(keepingCapacity: true)
            timerEventIndices.removeAll(keepingCapacity: true)
        }
    }

    /// The buffers a batch needs, kept between batches.
    struct BatchScratch: Sendable {
        /// Per update, its shard (then reused as a cursor per shard).
        var owner: [UInt32] = []
        /// The update positions, grouped by shard (a counting sort of `owner`), each group in batch order.
        var positions: [Int32] = []
        /// Where each shard's group starts in `positions`; one more entry for the end.
        var starts: [Int] = []
        var outputs: [ShardOutput] = []
    }

    /// The batch path on the batch's memory.
    mutating func processBatch(_ batch: UnsafeBufferPointer<LocationUpdate>, advancingDevices: Bool) -> BatchOutput {
        guard !batch.isEmpty else { return BatchOutput() }
        let count = shards.count
        var scratch = batchScratch
        batchScratch = BatchScratch()  // moved out, so that the buffers below are unique (no copy on write)
        defer { batchScratch = scratch }
        if scratch.outputs.count != count { scratch.outputs = Array(repeating: ShardOutput(), count: count) }

        if count == 1 {
            scratch.outputs[0].reset()
            Self.runShard(&shards[0], batch, positions: batch.indices, advancingDevices: advancingDevices,
                          into: &scratch.outputs[0])
            let output = scratch.outputs[0]
            let result = BatchOutput(events: output.events, rejections: output.rejections,
                                     timerEventIndices: output.timerEventIndices)
            scratch.outputs[0] = ShardOutput()  // the result took the buffers
            return result
        }

        // Partition: a counting sort of the positions by shard, each shard's in batch order.
        precondition(batch.count <= Int(Int32.max), "a batch of at most 2^31 - 1 updates")
        scratch.owner.removeAll(keepingCapacity: true)
        scratch.owner.reserveCapacity(batch.count)
        scratch.starts = Array(repeating: 0, count: count + 1)
        for update in batch {
            let s = Self.fnv1a32(update.device.rawValue) % UInt32(count)
            scratch.owner.append(s)
            scratch.starts[Int(s) + 1] += 1
        }
        for s in 0..<count { scratch.starts[s + 1] += scratch.starts[s] }
        if scratch.positions.count < batch.count {
            scratch.positions = Array(repeating: 0, count: batch.count)
        }
        scratch.positions.withUnsafeMutableBufferPointer { positions in
            scratch.owner.withUnsafeMutableBufferPointer { owner in
                var next = scratch.starts
                for i in 0..<batch.count {
                    let s = Int(owner[i])
                    positions[next[s]] = Int32(i)
                    next[s] += 1
                }
            }
        }

        // Run.
        let parallel = batch.count >= parallelThreshold
        let starts = scratch.starts
        scratch.positions.withUnsafeBufferPointer { positions in
            scratch.outputs.withUnsafeMutableBufferPointer { outputs in
                let shared = UnsafeSendable((batch, positions, outputs))
                forEachShard(parallel: parallel) { s, engine in
                    let (batch, positions, outputs) = shared.value
                    outputs[s].reset()
                    let mine = UnsafeBufferPointer(rebasing: positions[starts[s] ..< starts[s + 1]])
                    guard !mine.isEmpty else { return }
                    Self.runShard(&engine, batch, positions: mine, advancingDevices: advancingDevices, into: &outputs[s])
                }
            }
        }

        // Merge.
        var merged = BatchOutput()
        merged.events.reserveCapacity(scratch.outputs.reduce(0) { $0 + $1.events.count })
        var heads = MinHeap<MarkHead>()
        var cursor = [Int](repeating: 0, count: count)
        for s in 0..<count where !scratch.outputs[s].marks.isEmpty {
            heads.push(MarkHead(update: scratch.outputs[s].marks[0].update, shard: s))
        }
        var begin = [Int](repeating: 0, count: count)
        while let head = heads.pop() {
            let s = head.shard
            let end = Int(scratch.outputs[s].marks[cursor[s]].end)
            merged.events.append(contentsOf: scratch.outputs[s].events[begin[s] ..< end])
            begin[s] = end
            cursor[s] += 1
            if cursor[s] < scratch.outputs[s].marks.count {
                heads.push(MarkHead(update: scratch.outputs[s].marks[cursor[s]].update, shard: s))
            }
        }
        // Rejections and timer positions are rare: gathered and put in batch order.
        for s in 0..<count {
            merged.rejections += scratch.outputs[s].rejections
            merged.timerEventIndices += scratch.outputs[s].timerEventIndices
        }
        merged.rejections.sort { $0.index < $1.index }
        merged.timerEventIndices.sort()
        return merged
    }

    /// Runs the updates at `positions` of `batch` (in that order) on one engine: the engine's own batch
    /// loop (``DetectionEngine/process(contentsOf:into:)``, reading the index ahead of the next three
    /// updates), with the device's timers first when `advancingDevices`.
    static func runShard<Positions: RandomAccessCollection>(
        _ engine: inout DetectionEngine, _ batch: UnsafeBufferPointer<LocationUpdate>, positions: Positions,
        advancingDevices: Bool, into output: inout ShardOutput
    ) where Positions.Element: BinaryInteger, Positions.Index == Int {
        engine.prepareIndex()
        let n = positions.count
        let base = positions.startIndex
        @inline(__always) func coordinate(_ k: Int) -> Coordinate { batch[Int(positions[base + k])].coordinate }
        var sink: UInt64 = 0
        if n > 1 { sink &+= engine.fences.readAhead(coordinate(1), step: 0) &+ engine.fences.readAhead(coordinate(1), step: 1) }
        if n > 2 { sink &+= engine.fences.readAhead(coordinate(2), step: 0) }
        var timers = TimerGate()
        for k in 0..<n {
            if k + 3 < n { sink &+= engine.fences.readAhead(coordinate(k + 3), step: 0) }
            if k + 2 < n { sink &+= engine.fences.readAhead(coordinate(k + 2), step: 1) }
            if k + 1 < n { sink &+= engine.fences.readAhead(coordinate(k + 1), step: 2) }
            let i = Int(positions[base + k])
            let before = output.events.count
            if advancingDevices, timers.mayFire(&engine, by: batch[i].time) {
                engine.advance(batch[i].device, to: batch[i].time, into: &output.events)
                if output.events.count > before { output.timerEventIndices.append(i) }
            }
            if let rejection = engine.process(batch[i], into: &output.events) { output.rejections.append((i, rejection)) }
            if output.events.count > before { output.marks.append(EventMark(update: Int32(i), end: Int32(output.events.count))) }
        }
        engine.readAheadSink &+= sink
    }
}

/// The next update with events of one shard, in the merge of ``ShardedEngine/processBatch(_:advancingDevices:)``.
private struct MarkHead: HeapElement {
    var update: Int32
    var shard: Int

    static func precedes(_ a: MarkHead, _ b: MarkHead) -> Bool { a.update < b.update }
}

/// Skips ``DetectionEngine/advance(_:to:into:)`` while the engine has no timer at all due by the
/// update's time: ``DetectionEngine/devicesWithDwellsDue(by:)`` empty means `advance(to:)` would do
/// nothing, so neither would the advance of one device (a subset of it). The look costs O(1) when nothing
/// is due; once it finds something due, every later update of the batch advances its device (the look
/// would cost O(d log n) each time, and timers only accumulate within a batch).
struct TimerGate {
    private var open = false

    mutating func mayFire(_ engine: inout DetectionEngine, by time: Date) -> Bool {
        if open { return true }
        open = !engine.devicesWithDwellsDue(by: time).isEmpty
        return open
    }
}
