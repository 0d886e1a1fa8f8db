/// Memory that ``ShardedEngine``'s batch path partitions a batch into, kept between batches: the shard
/// of every update (``owners(_:)``), or one shard's copies of its own updates with their batch positions
/// (``gather(shard:of:owners:count:)``).
///
/// The copies of updates are bitwise: a copy shares its device id's storage with the batch's update and
/// holds no reference count of its own. That is sound because a copy is only read, only while the batch
/// it was taken from is alive (within one ``ShardedEngine/process(_:advancingDevices:)``), and never
/// destroyed: the memory is raw between batches, and what the engine keeps of an update (an id in its
/// device table, in an event) it copies the ordinary way, which takes a reference of its own. Copying
/// this way costs one move of the update's bytes, without the retain, the release, and the calls through
/// `LocationUpdate`'s value witnesses that an `[LocationUpdate]` pays for each element it copies in and
/// empties out (about a third of the partition's cost, measured; docs/benchmarks.md, "Session 10 — shards").
final class ShardGather: @unchecked Sendable {
    private var updates: UnsafeMutablePointer<LocationUpdate>?
    private var positions: UnsafeMutablePointer<Int32>?
    private var capacity = 0
    private var ownerBuffer: UnsafeMutablePointer<UInt16>?
    private var ownerCapacity = 0

    deinit {
        // Never deinitialize the updates: they are bitwise copies that own nothing.
        updates.map { UnsafeMutableRawPointer($0).deallocate() }
        positions?.deallocate()
        ownerBuffer?.deallocate()
    }

    /// Room for the shards of `count` updates (uninitialised; the caller writes every element).
    func owners(_ count: Int) -> UnsafeMutableBufferPointer<UInt16> {
        if ownerCapacity < count {
            ownerBuffer?.deallocate()
            ownerBuffer = .allocate(capacity: count)
            ownerCapacity = count
        }
        return UnsafeMutableBufferPointer(start: ownerBuffer, count: count)
    }

    /// Copies the updates of `batch` whose owner is `shard` (there are `count`), in batch order, and
    /// their positions in `batch`. The result is valid until the next call and while `batch` is alive.
    func gather(shard: Int, of batch: UnsafeBufferPointer<LocationUpdate>, owners: UnsafeBufferPointer<UInt16>,
                count: Int) -> (updates: UnsafeBufferPointer<LocationUpdate>, positions: UnsafeBufferPointer<Int32>) {
        let stride = MemoryLayout<LocationUpdate>.stride
        if capacity < count {
            updates.map { UnsafeMutableRawPointer($0).deallocate() }
            positions?.deallocate()
            // A little room to spare: a shard's share of equal batches varies from one to the next.
            let room = count + count / 8 + 16
            updates = UnsafeMutableRawPointer.allocate(byteCount: room * stride, alignment: MemoryLayout<LocationUpdate>.alignment)
                .bindMemory(to: LocationUpdate.self, capacity: room)
            positions = .allocate(capacity: room)
            capacity = room
        }
        guard let base = batch.baseAddress, let target = updates, let at = positions else {
            return (UnsafeBufferPointer(start: nil, count: 0), UnsafeBufferPointer(start: nil, count: 0))
        }
        let source = UnsafeRawPointer(base), destination = UnsafeMutableRawPointer(target)
        let own = UInt16(truncatingIfNeeded: shard)
        var k = 0
        for i in 0..<owners.count where owners[i] == own {
            (destination + k * stride).copyMemory(from: source + i * stride, byteCount: stride)
            at[k] = Int32(truncatingIfNeeded: i)
            k += 1
        }
        precondition(k == count, "the owners changed while a shard gathered its updates")
        return (UnsafeBufferPointer(start: target, count: k), UnsafeBufferPointer(start: at, count: k))
    }
}
