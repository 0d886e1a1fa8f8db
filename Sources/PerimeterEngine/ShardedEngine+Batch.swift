import Foundation
import PerimeterFences
import PerimeterGeometry

/// The batch path of ``ShardedEngine``: partition, run the shards, merge.
///
/// Its cost beside the engines' own is kept to a few per cent of one engine's, so that N shards cost
/// about the CPU time of one (docs/benchmarks.md, "Shards"):
/// - the partition reads the batch once, in order, and copies each update once into its shard's
///   array (kept between batches), with its batch position: one FNV hash per update. Shards then read
///   their own updates in order. (Reading the batch in place through a list of positions was tried:
///   each shard then walked the whole batch's memory out of order, and those cache misses made 2 shards
///   cost 1.25× one shard's CPU time; docs/benchmarks.md, "Shards".);
/// - each shard appends to buffers of its own kept between batches (events, and only for the updates
///   that caused events, where each one's events end);
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
        /// Per shard, its updates of the batch, in batch order.
        var updates: [[LocationUpdate]] = []
        /// Per shard, the batch positions of those updates.
        var positions: [[Int32]] = []
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

        // Partition: each update copied once, in batch order, to its shard's array.
        precondition(batch.count <= Int(Int32.max), "a batch of at most 2^31 - 1 updates")
        if scratch.updates.count != count {
            scratch.updates = Array(repeating: [], count: count)
            scratch.positions = Array(repeating: [], count: count)
        }
        for s in 0..<count {
            scratch.updates[s].reserveCapacity(batch.count / count + batch.count / (4 * count) + 16)
            scratch.positions[s].reserveCapacity(batch.count / count + batch.count / (4 * count) + 16)
        }
        for i in batch.indices {
            let s = Int(Self.fnv1a32(batch[i].device.rawValue) % UInt32(count))
            scratch.updates[s].append(batch[i])
            scratch.positions[s].append(Int32(i))
        }

        // Run.
        let parallel = batch.count >= parallelThreshold
        scratch.updates.withUnsafeBufferPointer { updates in
            scratch.positions.withUnsafeBufferPointer { positions in
                scratch.outputs.withUnsafeMutableBufferPointer { outputs in
                    let shared = UnsafeSendable((updates, positions, outputs))
                    forEachShard(parallel: parallel) { s, engine in
                        let (updates, positions, outputs) = shared.value
                        outputs[s].reset()
                        guard !updates[s].isEmpty else { return }
                        updates[s].withUnsafeBufferPointer { mine in
                            positions[s].withUnsafeBufferPointer { at in
                                Self.runShard(&engine, mine, positions: at, advancingDevices: advancingDevices, into: &outputs[s])
                            }
                        }
                    }
                }
            }
        }
        // The shards' copies go now: their ids' storage is not kept alive until the next batch.
        for s in 0..<count {
            scratch.updates[s].removeAll(keepingCapacity: true)
            scratch.positions[s].removeAll(keepingCapacity: true)
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

    /// Runs `updates` (in that order) on one engine: the engine's own batch loop
    /// (``DetectionEngine/process(contentsOf:into:)``), with the device's timers first when `advancingDevices`; `positions[k]` is the batch
    /// position of `updates[k]`, as the output records it.
    static func runShard<Positions: RandomAccessCollection>(
        _ engine: inout DetectionEngine, _ updates: UnsafeBufferPointer<LocationUpdate>, positions: Positions,
        advancingDevices: Bool, into output: inout ShardOutput
    ) where Positions.Element: BinaryInteger, Positions.Index == Int {
        engine.prepareIndex()
        let n = updates.count
        let base = positions.startIndex
        var timers = TimerGate()
        for k in 0..<n {
            let i = Int(positions[base + k])
            let before = output.events.count
            if advancingDevices, timers.mayFire(&engine, by: updates[k].time) {
                engine.advance(updates[k].device, to: updates[k].time, into: &output.events)
                if output.events.count > before { output.timerEventIndices.append(i) }
            }
            if let rejection = engine.process(updates[k], into: &output.events) { output.rejections.append((i, rejection)) }
            if output.events.count > before { output.marks.append(EventMark(update: Int32(i), end: Int32(output.events.count))) }
        }
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
