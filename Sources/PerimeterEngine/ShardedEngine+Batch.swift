import Dispatch
import Foundation
import PerimeterFences
import PerimeterGeometry

/// The batch path of ``ShardedEngine``: partition, run the shards, merge.
///
/// Its cost beside the engines' own is kept to a few per cent of one engine's, and as little of it as
/// possible on the calling thread alone while the other cores wait (docs/benchmarks.md, "Shards" and
/// "Session 10 — shards"):
/// - the calling thread only finds each update's shard (one FNV hash per update, into a buffer kept
///   between batches); each shard then gathers its own updates itself, on its own thread, in batch
///   order, into a buffer of its own kept between batches (``ShardGather``: a bitwise copy, no reference
///   counting). Shards read their own updates in order, so the read-ahead's first touch of an update is
///   sequential. (Reading the batch in place through a list of positions was tried in session 9: each
///   shard then walked the whole batch's memory out of order, and those cache misses made 2 shards cost
///   1.25× one shard's CPU time.);
/// - while a shard runs, its engine and its output buffers live on the stack of the thread that runs it
///   (moved there and back, not copied), never side by side with another shard's in one array: a shard's
///   counters are written at every update, and a cache line shared with a neighbour's fields would
///   bounce between the cores;
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
        /// The shard of each update of the batch (its `owners` buffer).
        var owners = ShardGather()
        /// Per shard, its updates of the batch and their positions.
        var gathers: [ShardGather] = []
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

        // Partition: the shard of each update (one hash each, into a buffer kept between batches). In
        // parallel, each of `count` equal parts of the batch is hashed on a thread of its own: on the
        // calling thread alone it was the largest part of the serial work (it is also the batch's first
        // touch, which may miss in every cache). The updates are then gathered by the shards themselves.
        precondition(batch.count <= Int(Int32.max), "a batch of at most 2^31 - 1 updates")
        if scratch.gathers.count != count { scratch.gathers = (0..<count).map { _ in ShardGather() } }
        for s in 0..<count where !isKnownUniquelyReferenced(&scratch.gathers[s]) { scratch.gathers[s] = ShardGather() }
        if !isKnownUniquelyReferenced(&scratch.owners) { scratch.owners = ShardGather() }
        let owners = scratch.owners.owners(batch.count)
        let parallel = batch.count >= parallelThreshold
        let sizes = Self.findOwners(of: batch, among: count, into: owners, parallel: parallel)

        // Run. Each shard gathers its updates (in batch order, into its own buffer: read in order, they
        // keep the read-ahead's loads sequential) and runs them, on its own thread, with its output moved
        // onto that thread's stack while it works (as its engine is: no false sharing between cores).
        let gathers = scratch.gathers
        scratch.outputs.withUnsafeMutableBufferPointer { outputs in
            let shared = UnsafeSendable((batch, UnsafeBufferPointer(owners), gathers, outputs.baseAddress!, sizes))
            forEachShard(parallel: parallel) { s, engine in
                let (batch, owners, gathers, outputs, sizes) = shared.value
                var output = (outputs + s).move()
                output.reset()
                if sizes[s] > 0 {
                    let (mine, at) = gathers[s].gather(shard: s, of: batch, owners: owners, count: sizes[s])
                    Self.runShard(&engine, mine, positions: at, advancingDevices: advancingDevices, into: &output)
                }
                (outputs + s).initialize(to: consume output)
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

    /// Writes the shard of every update of `batch` into `owners` and returns how many each shard owns.
    /// In parallel, `count` equal parts of the batch are hashed at once, each on a thread of its own.
    static func findOwners(of batch: UnsafeBufferPointer<LocationUpdate>, among count: Int,
                           into owners: UnsafeMutableBufferPointer<UInt16>, parallel: Bool) -> [Int] {
        let parts = parallel ? count : 1
        // Per part, its count per shard: a row each, written once at the end of the part.
        let table = UnsafeMutableBufferPointer<Int>.allocate(capacity: parts * count)
        defer { table.deallocate() }
        let shared = UnsafeSendable((batch, owners, table))
        let hashPart = { @Sendable (part: Int) in
            let (batch, owners, table) = shared.value
            withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { sizes in
                sizes.initialize(repeating: 0)
                for i in batch.count * part / parts ..< batch.count * (part + 1) / parts {
                    let s = Int(fnv1a32(batch[i].device.rawValue) % UInt32(count))
                    owners[i] = UInt16(truncatingIfNeeded: s)
                    sizes[s] += 1
                }
                for s in 0..<count { table[part * count + s] = sizes[s] }
            }
        }
        if parts > 1 { DispatchQueue.concurrentPerform(iterations: parts, execute: hashPart) } else { hashPart(0) }
        var sizes = [Int](repeating: 0, count: count)
        for part in 0..<parts {
            for s in 0..<count { sizes[s] += table[part * count + s] }
        }
        return sizes
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
            // By address, as the engine's own batch loop passes it: `updates[k]` copied the update (its id
            // retained and released) for the call.
            if let rejection = engine.process(updateAt: updates.baseAddress! + k, into: &output.events) {
                output.rejections.append((i, rejection))
            }
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
