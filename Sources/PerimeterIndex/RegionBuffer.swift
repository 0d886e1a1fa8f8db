/// The numbers of the regions a query found, in storage the caller keeps from one query to the next.
///
/// ``RegionIndex/regions(containing:into:)`` (the `RegionBuffer` form) writes its answer here without any of an
/// array's per-query work: it clears the buffer by setting its count, and makes sure of the room once,
/// before it starts, for the most regions any point of the index's grid can be in
/// (``RegionIndex/answerCapacity``), so that each found region is one store and one increment, with
/// neither a capacity check nor a uniqueness check.
///
/// A value type: copies share their memory until one of them is written, which then gets memory of its
/// own first (the answer about to be written does not need the old contents, so nothing is copied).
/// Two copies of an engine that own one buffer therefore never write the same memory.
public struct RegionBuffer: Sendable, RandomAccessCollection {
    /// The memory of a buffer: `capacity` region numbers at `base`, freed with the object, so that no
    /// pointer outlives its owner.
    @usableFromInline
    final class Storage: @unchecked Sendable {  // written only while uniquely referenced (copy on write)
        /// The first region number.
        @usableFromInline let base: UnsafeMutablePointer<Int32>
        /// How many region numbers fit.
        @usableFromInline let capacity: Int

        init(capacity: Int) {
            self.capacity = Swift.max(capacity, 1)
            base = .allocate(capacity: self.capacity)
        }

        deinit { base.deallocate() }
    }

    /// The memory; shared by copies until one is written.
    @usableFromInline var storage: Storage
    /// How many region numbers the last query wrote.
    public private(set) var count: Int = 0

    /// An empty buffer with room for `capacity` region numbers (a query makes room for more when its
    /// index needs it).
    public init(capacity: Int = 16) {
        storage = Storage(capacity: capacity)
    }

    /// How many region numbers fit without new memory.
    public var capacity: Int { storage.capacity }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { count }

    /// The `i`th region number, ascending in a query's answer.
    @inlinable
    public subscript(i: Int) -> Int32 {
        precondition(UInt(bitPattern: i) < UInt(bitPattern: count), "RegionBuffer index out of range")
        return storage.base[i]
    }

    /// Calls `body` with the region numbers in place. The pointer is valid only during the call.
    @inlinable
    public func withUnsafeBufferPointer<R>(_ body: (UnsafeBufferPointer<Int32>) throws -> R) rethrows -> R {
        try withExtendedLifetime(storage) { try body(UnsafeBufferPointer(start: storage.base, count: count)) }
    }

    /// Empties the buffer and returns memory a query may write `atMost` region numbers to, owned by this
    /// buffer alone: new memory when a copy shares the current one or when it is too small. Then
    /// ``setCount(_:)`` says how many were written.
    @inline(__always)
    mutating func startAnswer(atMost: Int) -> UnsafeMutablePointer<Int32> {
        count = 0
        if _slowPath(!isKnownUniquelyReferenced(&storage) || storage.capacity < atMost) {
            storage = Storage(capacity: Swift.max(atMost, storage.capacity))
        }
        return storage.base
    }

    /// Sets the number of region numbers written to the memory ``startAnswer(atMost:)`` returned.
    @inline(__always)
    mutating func setCount(_ written: Int) {
        count = written
    }

    /// Makes the buffer hold exactly `numbers` (the rare answers computed into an array).
    mutating func replace(with numbers: [Int32]) {
        let base = startAnswer(atMost: numbers.count)
        for (i, r) in numbers.enumerated() { base[i] = r }
        count = numbers.count
    }
}
