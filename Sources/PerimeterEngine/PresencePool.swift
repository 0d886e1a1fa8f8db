import PerimeterFences

/// The fence lists of all of an engine's devices, in one array: what lets a device record name its list
/// with 4 bytes (a ``List``) instead of an 8-byte array reference, so that an idle device costs at most
/// 64 bytes (docs/benchmarks.md, "Session 14 — device memory").
///
/// A list lives in a block of `2^c + 1` entries for a size class `c`: a header entry (the list's count
/// and the block's class), then room for `2^c` memberships, ascending by fence slot. A list that
/// outgrows its block moves to a block of the next classes; one that shrinks to a quarter of its room
/// or less moves to a smaller block; an empty list has no block. Freed blocks wait on a free list of
/// their class and are handed out again before the array grows, so devices leaving fences make room for
/// devices entering them; the array itself does not shrink (as an array emptied with
/// `removeAll(keepingCapacity:)`).
///
/// Memory: a device inside k ≥ 1 fences holds a block of at most 4k + 1 entries of 24 bytes (fewer than
/// 2k + 1 while it only grows), plus its share of free blocks; none for a device inside none. The array
/// grows by an eighth when full, so its spare room is at most an eighth of what it holds.
/// Entry 0 is never a block, so that list 0 is the empty list. Blocks are addressed with 32 bits: the
/// pool holds at most 2³² − 1 entries (about 96 GiB of memberships).
struct PresencePool: Sendable {
    /// A device's fence list: the offset of its block's header in the pool, 0 for the empty list.
    typealias List = UInt32

    /// Block headers and memberships. A header is stored as a ``Membership`` whose `slot` is the block's
    /// size class, `ordinal` the list's count, and — for a free block — `visitSequence` the next free
    /// block of that class (0: none).
    private(set) var entries: [Membership] = []
    /// Per size class, the first free block (0: none).
    private var freeBlocks: [List] = []
    /// Entries in free blocks (headers included).
    private(set) var freeEntries = 0

    /// The number of memberships in `list`.
    /// - Complexity: O(1).
    @inline(__always)
    func count(_ list: List) -> Int {
        list == 0 ? 0 : Int(entries[Int(list)].ordinal)
    }

    /// The `i`-th membership of `list` (`i < count(list)`).
    @inline(__always)
    subscript(list: List, i: Int) -> Membership {
        entries[Int(list) + 1 + i]
    }

    /// Calls `body` with the memberships of `list` (not empty) in place, `count(list)` of them.
    @inline(__always)
    func withMembers<R>(of list: List, _ body: (UnsafeBufferPointer<Membership>) -> R) -> R {
        entries.withUnsafeBufferPointer { all in
            let start = Int(list) + 1
            return body(UnsafeBufferPointer(rebasing: all[start ..< start + Int(all[Int(list)].ordinal)]))
        }
    }

    /// Marks the `i`-th membership of `list` as dwelled.
    @inline(__always)
    mutating func markDwelled(_ list: List, _ i: Int) {
        entries[Int(list) + 1 + i].hasDwelled = true
    }

    /// The memberships of `list`, as an array.
    /// - Complexity: O(k) for k memberships.
    func members(_ list: List) -> [Membership] {
        guard list != 0 else { return [] }
        let start = Int(list) + 1
        return Array(entries[start..<start + count(list)])
    }

    /// Appends the memberships of `list` to `array`.
    @inline(__always)
    func append(_ list: List, to array: inout [Membership]) {
        guard list != 0 else { return }
        let start = Int(list) + 1
        array.append(contentsOf: entries[start..<start + count(list)])
    }

    /// Makes `list` hold `members` (ascending by slot): in place when they fit its block and do not
    /// leave it three quarters empty, else in a block of their size (the old one freed).
    /// - Complexity: O(k) for k members, amortised (the array may grow).
    mutating func replace(_ list: inout List, with members: [Membership]) {
        members.withUnsafeBufferPointer { replace(&list, with: $0) }
    }

    /// ``replace(_:with:)`` from a buffer (not one of the pool's own entries).
    @inline(__always)
    mutating func replace(_ list: inout List, with members: UnsafeBufferPointer<Membership>) {
        let n = members.count
        guard n > 0 else { return free(&list) }
        if list != 0 {
            let capacity = 1 << Int(entries[Int(list)].slot)
            if n > capacity || (capacity >= 4 && 4 * n <= capacity) { free(&list) }
        }
        if list == 0 { list = allocate(sizeClass: Self.sizeClass(of: n)) }
        let start = Int(list)
        entries.withUnsafeMutableBufferPointer { e in
            e[start].ordinal = UInt32(n)
            for i in 0..<n { e[start + 1 + i] = members[i] }
        }
    }

    /// Gives the block of `list` back and makes `list` empty.
    /// - Complexity: O(1).
    mutating func free(_ list: inout List) {
        guard list != 0 else { return }
        let sizeClass = Int(entries[Int(list)].slot)
        entries[Int(list)] = Self.header(sizeClass: sizeClass, count: 0, next: freeBlocks[sizeClass])
        freeBlocks[sizeClass] = list
        freeEntries += Self.blockSize(sizeClass)
        list = 0
    }

    /// Bytes the pool occupies (its array's capacity).
    var byteCount: Int { entries.capacity * MemoryLayout<Membership>.stride }

    /// The size class of a list of `n` ≥ 1 memberships: the smallest `c` with `2^c ≥ n`.
    static func sizeClass(of n: Int) -> Int {
        n <= 1 ? 0 : Int.bitWidth - (n - 1).leadingZeroBitCount
    }

    /// Entries in a block of class `c`: its header and `2^c` memberships.
    static func blockSize(_ sizeClass: Int) -> Int { (1 << sizeClass) + 1 }

    private static func header(sizeClass: Int, count: Int, next: List) -> Membership {
        Membership(slot: FenceSet.Slot(sizeClass), entryTime: 0, visitSequence: UInt64(next), ordinal: UInt32(count))
    }

    /// A block of class `sizeClass` for a list (its count still 0): a free one, else new at the end.
    private mutating func allocate(sizeClass: Int) -> List {
        if sizeClass < freeBlocks.count, freeBlocks[sizeClass] != 0 {
            let block = freeBlocks[sizeClass]
            freeBlocks[sizeClass] = List(entries[Int(block)].visitSequence)
            entries[Int(block)] = Self.header(sizeClass: sizeClass, count: 0, next: 0)
            freeEntries -= Self.blockSize(sizeClass)
            return block
        }
        while freeBlocks.count <= sizeClass { freeBlocks.append(0) }
        if entries.isEmpty { entries.append(Self.header(sizeClass: 0, count: 0, next: 0)) }  // entry 0: no block
        let block = entries.count
        let size = Self.blockSize(sizeClass)
        precondition(block + size <= Int(List.max),
                     "PresencePool: the fence lists of this engine's devices exceed 2^32 - 1 memberships")
        if block + size > entries.capacity {
            // By an eighth, not by doubling (as the device records): spare room of at most an eighth.
            entries.reserveCapacity(block + max(size, block / 8))
        }
        entries.append(Self.header(sizeClass: sizeClass, count: 0, next: 0))
        entries.append(contentsOf: repeatElement(Self.header(sizeClass: 0, count: 0, next: 0), count: size - 1))
        return List(block)
    }
}
