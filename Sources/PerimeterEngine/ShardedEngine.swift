import Dispatch
import Foundation
import PerimeterFences

/// Several ``DetectionEngine``s, each owning the devices of one partition, driven in parallel behind
/// the engine's own API: the events are those one engine gives for the same calls.
///
/// **Partition.** A device belongs to shard ``shard(of:among:)``: FNV-1a (32 bits) of its id's UTF-8
/// (canonical composition, NFC, so that ids the engine treats as equal land together) modulo the shard
/// count. The partition depends on the id and the count only, never on history, so a device's state
/// stays in one shard and a restart with the same count puts it back there.
///
/// **What is shared.** Every shard watches every fence: fence changes apply to all shards (in the same
/// order relative to updates, so "was this fence added after the device's last update" is answered as
/// one engine would). A device's updates, timers, ``advance(_:to:into:)`` and ``forget(_:exitsAt:into:)``
/// go to its shard only; ``advance(to:into:)`` and ``flush(into:)`` go to all.
///
/// **Same events.** Everything a device's events depend on — its own updates in order, its own timers,
/// the fences — is in its shard, and event and visit ids are derived from what the event is (never from
/// a count that spans devices; docs/semantics.md, "Event and visit ids"). So each device gets exactly the
/// events, with the same ids, in the same order, as in one engine. Across devices the order is fixed by
/// this rule (docs/semantics.md, "Shards"):
/// 1. ``process(_:advancingDevices:)``: events come by update, in batch order (each update's events in
///    the engine's order) — exactly the order of one engine processing the batch.
/// 2. The clock (``advance(to:into:)``, ``advance(to:holding:into:)``, ``flush(into:)``) and
///    ``replay(_:progress:)``: the devices' own event sequences are merged by the time of each device's
///    next event, ties by device id. For the default dwells of ``advance(to:into:)`` that is the engine's
///    own order (time, device, fence); ``DetectionEngine/replay(_:progress:)`` orders equal times by the
///    device seen first instead.
///
/// **Threads.** The core does no I/O and keeps no thread of its own: a call that has work for several
/// shards runs them with `DispatchQueue.concurrentPerform` (Dispatch's pool, at most one thread per
/// core; the calling thread takes part) and returns when all are done. Each shard is touched by one
/// thread at a time and shards share nothing mutable, so no lock is taken. Small batches (fewer than
/// ``parallelThreshold`` updates) run on the calling thread: waking the pool costs more than they do.
/// The value is not thread-safe as a whole, like ``DetectionEngine``: one caller at a time.
public struct ShardedEngine: Sendable {
    /// The shard of `device` among `count` shards: FNV-1a-32 of the UTF-8 of the id's canonical
    /// composition (NFC; ASCII ids as they are), modulo `count`. Stable across runs and platforms.
    public static func shard(of device: DeviceID, among count: Int) -> Int {
        guard count > 1 else { return 0 }
        return Int(fnv1a32(device.rawValue) % UInt32(count))
    }

    /// FNV-1a, 32 bits, of the UTF-8 of `text` in NFC (ASCII text is hashed without normalising).
    static func fnv1a32(_ text: String) -> UInt32 {
        // The bytes in place when the string has them contiguous (native strings, small ones included).
        let fast = text.utf8.withContiguousStorageIfAvailable { bytes -> UInt32? in
            var hash: UInt32 = 0x811C_9DC5
            for byte in bytes {
                if byte >= 0x80 { return nil }
                hash = (hash ^ UInt32(byte)) &* 0x0100_0193
            }
            return hash
        }
        if let fast, let hash = fast { return hash }
        var hash: UInt32 = 0x811C_9DC5
        var ascii = true
        for byte in text.utf8 {
            if byte >= 0x80 { ascii = false; break }
            hash = (hash ^ UInt32(byte)) &* 0x0100_0193
        }
        guard !ascii else { return hash }
        hash = 0x811C_9DC5
        for byte in text.precomposedStringWithCanonicalMapping.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
        return hash
    }

    /// Batches (and replays) with fewer updates than this run on the calling thread, shard after shard:
    /// waking the pool costs more than they do. 256 by default.
    public var parallelThreshold = 256

    /// The engines, one per shard.
    public internal(set) var shards: [DetectionEngine]
    /// Engine-wide accepted-update sequence at the last restore (see ``acceptedUpdateSequence``).
    private var sequenceBase: Int64 = 0
    /// For fences added after the start, the global sequence at their addition plus one (as one engine
    /// records it), to translate the shards' own sequences (more than one shard only).
    private var additions: [FenceID: Int64] = [:]
    /// Whether fences changed since the shards last shared one fence set (``shareFenceIndex()``).
    var fencesChanged = false
    /// Partition lists and the shards' output buffers, kept between batches (ShardedEngine+Batch.swift).
    var batchScratch = BatchScratch()

    /// Creates `count` shards (at least one, at most 65,536) watching `fences`. The fence index is built
    /// once and shared by the shards, and stays shared across fence changes (``shareFenceIndex()``).
    public init(fences: FenceSet = FenceSet(), configuration: DetectionEngine.Configuration = .init(), shards count: Int = 1) {
        var prepared = fences
        prepared.prepare()
        let engine = DetectionEngine(fences: prepared, configuration: configuration)
        shards = Array(repeating: engine, count: min(max(1, count), 1 << 16))
    }

    /// Creates `count` shards watching `fences`; a later fence replaces an earlier one with the same id.
    public init(fences: [Fence], configuration: DetectionEngine.Configuration = .init(), shards count: Int = 1) {
        self.init(fences: FenceSet(fences), configuration: configuration, shards: count)
    }

    /// The number of shards.
    public var shardCount: Int { shards.count }

    /// The engines' settings.
    public var configuration: DetectionEngine.Configuration { shards[0].configuration }

    /// The shard of `device` in this engine.
    public func shard(of device: DeviceID) -> Int { Self.shard(of: device, among: shards.count) }

    // MARK: - Fences

    /// The fence set every shard watches.
    public var fenceSet: FenceSet { shards[0].fenceSet }

    /// The fence with `id`, if the engine watches one.
    public func fence(id: FenceID) -> Fence? { shards[0].fence(id: id) }

    /// ``fence(id:)`` read where the first shard lies, for a caller that holds the engine mutably (a
    /// service naming the fence of each event it logs). `mutating` only to reach the shard in place:
    /// called as a non-mutating method on `shards[0]`, the compiler copied the whole shard — every table
    /// retained and released — which cost more than the look-up.
    public mutating func fenceInPlace(id: FenceID) -> Fence? { shards[0].fenceInPlace(id: id) }

    /// Adds a fence to every shard, or replaces the one with the same id (``DetectionEngine/upsert(_:)``).
    public mutating func upsert(_ fence: Fence) {
        let isNew = shards[0].fence(id: fence.id) == nil
        if isNew, shards.count > 1 { additions[fence.id] = acceptedUpdateSequence + 1 }
        for s in shards.indices { shards[s].upsert(fence) }
        fencesChanged = shards.count > 1
    }

    /// Adds or replaces several fences; the index is rebuilt once, now, and shared by every shard.
    public mutating func upsert<S: Sequence>(contentsOf newFences: S) where S.Element == Fence {
        for fence in newFences { upsert(fence) }
        prepareIndex()
    }

    /// Rebuilds the fence index now if fences changed since it was built, once for every shard.
    public mutating func prepareIndex() {
        if shards.count == 1 { shards[0].prepareIndex() } else { shareFenceIndex() }
    }

    /// After fence changes, makes every shard use one fence set and index: shard 0's, rebuilt once.
    ///
    /// Every shard applies each fence change through its own engine (each keeps its own bookkeeping of
    /// it: when a fence was added, which dwells to reschedule), so the shards' fence sets hold the same
    /// fences in the same slots; only their storage differs, each having copied it on change. Shard 0's
    /// is prepared and handed to the others, whose copies are then freed: one index in memory, however
    /// many shards. Called by every entry point that may query the index, so no shard ever rebuilds
    /// one of its own. O(1) when nothing changed.
    mutating func shareFenceIndex() {
        guard fencesChanged else { return }
        fencesChanged = false
        // Drop the other shards' references first, so that shard 0 prepares its set in place.
        for s in shards.indices.dropFirst() { shards[s].fences = FenceSet() }
        shards[0].prepareIndex()
        let shared = shards[0].fences
        for s in shards.indices.dropFirst() { shards[s].fences = shared }
    }

    /// Stops watching the fence with `id` in every shard (``DetectionEngine/remove(id:)``).
    @discardableResult
    public mutating func remove(id: FenceID) -> Fence? {
        additions.removeValue(forKey: id)
        var removed: Fence?
        for s in shards.indices { removed = shards[s].remove(id: id) ?? removed }
        fencesChanged = shards.count > 1
        return removed
    }

    /// Stops watching every fence in every shard.
    public mutating func removeAllFences() {
        additions = [:]
        for s in shards.indices { shards[s].removeAllFences() }
        fencesChanged = shards.count > 1
    }

    // MARK: - Updates

    /// What ``process(_:advancingDevices:)`` did.
    public struct BatchOutput: Sendable {
        /// The events, by update in batch order; each update's events in the engine's order (with
        /// `advancingDevices`, the device's timers first).
        public var events: [GeofenceEvent] = []
        /// The rejected updates: their position in the batch and why, in batch order.
        public var rejections: [(index: Int, rejection: DetectionEngine.Rejection)] = []
        /// With `advancingDevices`: the positions of the updates before which their device's own timers
        /// fired events, in batch order.
        public var timerEventIndices: [Int] = []
    }

    /// Evaluates a batch, each device's updates in their batch order on the device's shard; shards run
    /// in parallel when the batch is large enough.
    ///
    /// With `advancingDevices`, each update is preceded by ``DetectionEngine/advance(_:to:into:)`` of its
    /// device to its time — the live service's per-device clock (docs/semantics.md, "Time in the live
    /// service").
    /// - Complexity: the engines' cost per update divided among the shards, plus O(n) to partition n
    ///   updates (one hash each, the batch's parts hashed in parallel; each shard then copies its own
    ///   updates bitwise, in parallel) and O(e log N) to merge e events of N shards on the calling thread.
    public mutating func process<Updates: Collection>(_ updates: Updates, advancingDevices: Bool = false) -> BatchOutput
    where Updates.Element == LocationUpdate {
        shareFenceIndex()
        if let output = updates.withContiguousStorageIfAvailable({ processBatch($0, advancingDevices: advancingDevices) }) {
            return output
        }
        return Array(updates).withUnsafeBufferPointer { processBatch($0, advancingDevices: advancingDevices) }
    }

    /// Evaluates one update on its device's shard (``DetectionEngine/process(_:into:)``).
    @discardableResult
    public mutating func process(_ update: LocationUpdate, into events: inout [GeofenceEvent]) -> DetectionEngine.Rejection? {
        shareFenceIndex()
        return shards[shard(of: update.device)].process(update, into: &events)
    }

    // MARK: - The clock

    /// Fires every timer due by `time` in every shard (``DetectionEngine/advance(to:into:)``); events
    /// merged by time, then device (each device's order kept).
    public mutating func advance(to time: Date, into events: inout [GeofenceEvent]) {
        advance(to: time, holding: [], into: &events)
    }

    /// Like ``advance(to:into:)``, leaving the `held` devices' timers pending
    /// (``DetectionEngine/advance(to:holding:into:)``).
    public mutating func advance(to time: Date, holding held: Set<DeviceID>, into events: inout [GeofenceEvent]) {
        shareFenceIndex()
        let lists = eachShardCollecting { engine, out in engine.advance(to: time, holding: held, into: &out) }
        events.append(contentsOf: Self.mergeByDevice(lists))
    }

    /// Fires every timer of `device` due by `time`, on its shard only (``DetectionEngine/advance(_:to:into:)``).
    public mutating func advance(_ device: DeviceID, to time: Date, into events: inout [GeofenceEvent]) {
        shareFenceIndex()
        shards[shard(of: device)].advance(device, to: time, into: &events)
    }

    /// Fires every dwell that falls due by `time` and returns the events.
    public mutating func advance(to time: Date) -> [GeofenceEvent] {
        var events: [GeofenceEvent] = []
        advance(to: time, into: &events)
        return events
    }

    /// Processes every update still waiting in a reorder window, in every shard
    /// (``DetectionEngine/flush(into:)``); events merged by time, then device.
    public mutating func flush(into events: inout [GeofenceEvent]) {
        shareFenceIndex()
        let lists = eachShardCollecting { engine, out in engine.flush(into: &out) }
        events.append(contentsOf: Self.mergeByDevice(lists))
    }

    /// Drops `device` from its shard (``DetectionEngine/forget(_:exitsAt:into:)``).
    @discardableResult
    public mutating func forget(_ device: DeviceID, exitsAt time: Date? = nil, into events: inout [GeofenceEvent]) -> Bool {
        shareFenceIndex()
        return shards[shard(of: device)].forget(device, exitsAt: time, into: &events)
    }

    // MARK: - Replay

    /// Replays recorded updates as ``DetectionEngine/replay(_:progress:)`` does, each shard on its own
    /// devices in parallel: the same events per device, merged by time then device id (rule 2 above);
    /// rejections in the order one engine meets them.
    ///
    /// Each shard follows the one engine's loop over the updates (merged in time order, each device's
    /// in input order): it processes its own devices' updates, and advances its clock at the others'
    /// where that fires something of its own — so its devices' timers fire in the same calls as in one
    /// engine (with options, which call fires a timer decides the order of a device's events).
    /// - Parameter progress: called now and then, on the calling thread, with a number of updates done.
    public mutating func replay(_ updates: [LocationUpdate], progress: ((Int) -> Void)? = nil) -> DetectionEngine.ReplayResult {
        shareFenceIndex()
        let order = DetectionEngine.replayOrder(updates)
        let count = shards.count
        var owner = [UInt16](repeating: 0, count: order.count)
        for (k, i) in order.enumerated() { owner[k] = UInt16(shard(of: updates[Int(i)].device)) }
        var outputs = [ReplayOutput](repeating: ReplayOutput(), count: count)
        let parallel = count > 1 && updates.count >= parallelThreshold
        outputs.withUnsafeMutableBufferPointer { out in
            let results = UnsafeSendable(out)
            forEachShard(parallel: parallel) { s, engine in
                var output = ReplayOutput()
                var checked = -Double.infinity
                for k in order.indices {
                    let update = updates[Int(order[k])]
                    if Int(owner[k]) == s {
                        engine.advance(to: update.time, into: &output.events)
                        if let rejection = engine.process(update, into: &output.events) { output.rejections.append((k, rejection)) }
                        checked = -.infinity
                    } else {
                        // One engine advances its clock here too: do so where it would fire something of
                        // this shard's (a check that costs O(1) when nothing is due).
                        let t = update.time.timeIntervalSince1970
                        guard t != checked else { continue }
                        checked = t
                        if !engine.devicesWithDwellsDue(by: update.time).isEmpty {
                            engine.advance(to: update.time, into: &output.events)
                        }
                    }
                }
                engine.flush(into: &output.events)
                results.value[s] = output
            }
        }
        progress?(updates.count)
        var rejections = outputs.flatMap(\.rejections)
        if count > 1 { rejections.sort { $0.step < $1.step } }
        return DetectionEngine.ReplayResult(events: Self.mergeByDevice(outputs.map(\.events)),
                                            rejections: rejections.map(\.rejection))
    }

    private struct ReplayOutput {
        var events: [GeofenceEvent] = []
        var rejections: [(step: Int, rejection: DetectionEngine.Rejection)] = []
    }

    // MARK: - State

    /// Counters summed over the shards.
    public var statistics: DetectionEngine.Statistics {
        var total = DetectionEngine.Statistics()
        for engine in shards {
            let s = engine.statistics
            total.acceptedUpdates += s.acceptedUpdates
            total.rejectedUpdates += s.rejectedUpdates
            total.entries += s.entries
            total.dwells += s.dwells
            total.exits += s.exits
            total.crosses += s.crosses
            total.insides += s.insides
            total.duplicateUpdates += s.duplicateUpdates
        }
        return total
    }

    /// The fences `device` is inside, as of `time` when later than its last update (``DetectionEngine/presence(of:at:)``).
    public func presence(of device: DeviceID, at time: Date? = nil) -> [Presence] {
        shards[shard(of: device)].presence(of: device, at: time)
    }

    /// The time of `device`'s last accepted update (``DetectionEngine/lastUpdateTime(of:)``).
    public func lastUpdateTime(of device: DeviceID) -> Date? { shards[shard(of: device)].lastUpdateTime(of: device) }

    /// The devices the engine knows: shard by shard, each in order of first update.
    public var knownDevices: [DeviceID] { shards.flatMap(\.knownDevices) }

    /// The number of updates waiting in reorder windows, in all shards.
    public var bufferedUpdateCount: Int { shards.reduce(0) { $0 + $1.bufferedUpdateCount } }

    /// The devices ``advance(to:into:)`` may change if called with `time`, shard by shard
    /// (``DetectionEngine/devicesWithDwellsDue(by:)``).
    public mutating func devicesWithDwellsDue(by time: Date) -> [DeviceID] {
        var result: [DeviceID] = []
        for s in shards.indices { result += shards[s].devicesWithDwellsDue(by: time) }
        return result
    }

    /// The devices that carry option state, shard by shard.
    public var devicesWithOptionState: [DeviceID] { shards.flatMap(\.devicesWithOptionState) }

    // MARK: - Snapshots

    /// The engine-wide accepted-update sequence: as one engine counts it (with one shard, that shard's).
    public var acceptedUpdateSequence: Int64 {
        guard shards.count > 1 else { return shards[0].acceptedUpdateSequence }
        return shards.reduce(sequenceBase) { $0 + ($1.acceptedUpdateSequence - sequenceBase) }
    }

    /// The reorder-buffer arrival counter to store: the largest of the shards' (arrival numbers order
    /// equal-time updates within a device; across devices the merge rule decides).
    public var arrivalCount: UInt64 { shards.map(\.arrivalCount).max() ?? 0 }

    /// The sequence at which the fence with `id` was added, on the engine-wide scale
    /// (``DetectionEngine/additionSequence(of:)``).
    public func additionSequence(of id: FenceID) -> Int64? {
        guard shards.count > 1 else { return shards[0].additionSequence(of: id) }
        guard shards[0].fence(id: id) != nil else { return nil }
        return additions[id]
    }

    /// The engine-wide state, on the engine-wide scale (``DetectionEngine/engineState``).
    public var engineState: DetectionEngine.EngineState {
        guard shards.count > 1 else { return shards[0].engineState }
        var live: [FenceID: Int64] = [:]
        for (id, sequence) in additions where shards[0].fence(id: id) != nil { live[id] = sequence }
        return .init(acceptedSequence: acceptedUpdateSequence, arrivals: arrivalCount, fenceAdditions: live)
    }

    /// The state of `device` (``DetectionEngine/snapshot(of:)``), its sequences on the engine-wide scale.
    public func snapshot(of device: DeviceID) -> DetectionEngine.DeviceSnapshot? {
        let s = shard(of: device)
        return shards[s].snapshot(of: device).map { globalised($0, shard: s) }
    }

    /// Every device's state, shard by shard.
    public var deviceSnapshots: [DetectionEngine.DeviceSnapshot] {
        shards.indices.flatMap { s in shards[s].deviceSnapshots.map { globalised($0, shard: s) } }
    }

    /// Restores device states into fresh shards (``DetectionEngine/restore(_:engineState:)``), each to
    /// its device's shard; the snapshots may come from an engine with any number of shards.
    /// - Throws: ``DetectionEngine/RestoreError``; the engine is unchanged then.
    public mutating func restore(_ snapshots: [DetectionEngine.DeviceSnapshot],
                                 engineState: DetectionEngine.EngineState? = nil) throws(DetectionEngine.RestoreError) {
        var parts = [[DetectionEngine.DeviceSnapshot]](repeating: [], count: shards.count)
        for snapshot in snapshots { parts[shard(of: snapshot.device)].append(snapshot) }
        var restored = shards
        for s in restored.indices { try restored[s].restore(parts[s], engineState: engineState) }
        shards = restored
        if shards.count > 1 {
            sequenceBase = max(0, engineState?.acceptedSequence ?? 0)
            additions = [:]
            for (id, sequence) in engineState?.fenceAdditions ?? [:] where shards[0].fence(id: id) != nil {
                additions[id] = sequence
            }
        }
    }

    /// `snapshot` of shard `s` with its option state's sequence moved to the engine-wide scale: the
    /// largest engine-wide sequence that keeps it before exactly the fence additions it was before in
    /// its shard (the only thing the sequence is compared with).
    private func globalised(_ snapshot: DetectionEngine.DeviceSnapshot, shard s: Int) -> DetectionEngine.DeviceSnapshot {
        guard shards.count > 1, var options = snapshot.options else { return snapshot }
        let local = options.lastSequence
        var global = acceptedUpdateSequence
        for (id, sequence) in additions {
            if let added = shards[s].additionSequence(of: id), added > local { global = min(global, sequence - 1) }
        }
        options.lastSequence = global
        var result = snapshot
        result.options = options
        return result
    }

    // MARK: - Running the shards

    /// Runs `body` on every shard, in parallel when asked and there is more than one.
    ///
    /// In parallel, each shard's engine is moved (not copied: no reference count changes) onto the
    /// stack of the thread that runs it, and moved back after: the engines lie side by side in
    /// `shards`, and one shard's counters, written at every update, would otherwise share a cache line
    /// with the fields its neighbour reads at every update (false sharing between the cores).
    mutating func forEachShard(parallel: Bool, _ body: (Int, inout DetectionEngine) -> Void) {
        guard parallel, shards.count > 1 else {
            for s in shards.indices { body(s, &shards[s]) }
            return
        }
        shards.withUnsafeMutableBufferPointer { buffer in
            let engines = UnsafeSendable(buffer.baseAddress!)
            withoutActuallyEscaping(body) { body in
                let work = UnsafeSendable(body)
                DispatchQueue.concurrentPerform(iterations: buffer.count) { s in
                    let slot = engines.value + s
                    var engine = slot.move()
                    work.value(s, &engine)
                    slot.initialize(to: consume engine)
                }
            }
        }
    }

    /// Runs `body` on every shard in parallel and returns what each appended.
    private mutating func eachShardCollecting(_ body: (inout DetectionEngine, inout [GeofenceEvent]) -> Void) -> [[GeofenceEvent]] {
        if shards.count == 1 {
            var events: [GeofenceEvent] = []
            body(&shards[0], &events)
            return [events]
        }
        var lists = [[GeofenceEvent]](repeating: [], count: shards.count)
        lists.withUnsafeMutableBufferPointer { out in
            let results = UnsafeSendable(out)
            forEachShard(parallel: true) { s, engine in body(&engine, &results.value[s]) }
        }
        return lists
    }

    /// Merges event lists whose devices are disjoint: each device's events keep their order, and the
    /// device whose next event is earliest (then the smallest device id) goes next.
    /// - Complexity: O(e log d) for e events of d devices.
    static func mergeByDevice(_ lists: [[GeofenceEvent]]) -> [GeofenceEvent] {
        var sequences: [[GeofenceEvent]] = []
        var sequenceOf: [DeviceID: Int] = [:]
        for list in lists {
            for event in list {
                if let q = sequenceOf[event.device] {
                    sequences[q].append(event)
                } else {
                    sequenceOf[event.device] = sequences.count
                    sequences.append([event])
                }
            }
        }
        guard sequences.count > 1 else { return sequences.first ?? [] }
        var heap = MinHeap<DeviceHead>()
        for q in sequences.indices {
            heap.push(DeviceHead(time: sequences[q][0].time.timeIntervalSince1970, device: sequences[q][0].device, sequence: q))
        }
        var positions = [Int](repeating: 0, count: sequences.count)
        var merged: [GeofenceEvent] = []
        merged.reserveCapacity(sequenceOf.isEmpty ? 0 : lists.reduce(0) { $0 + $1.count })
        while let head = heap.pop() {
            let q = head.sequence
            merged.append(sequences[q][positions[q]])
            positions[q] += 1
            if positions[q] < sequences[q].count {
                let next = sequences[q][positions[q]]
                heap.push(DeviceHead(time: next.time.timeIntervalSince1970, device: next.device, sequence: q))
            }
        }
        return merged
    }
}

/// The next event of one device's sequence in ``ShardedEngine/mergeByDevice(_:)``.
private struct DeviceHead: HeapElement {
    var time: Double
    var device: DeviceID
    var sequence: Int

    static func precedes(_ a: DeviceHead, _ b: DeviceHead) -> Bool {
        a.time < b.time || (a.time == b.time && a.device < b.device)
    }
}

/// Carries a value into `concurrentPerform`'s closure. Sound here because each iteration touches only
/// its own element of the buffer, and the buffer outlives the call.
struct UnsafeSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
