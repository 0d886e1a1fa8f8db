/// The reader's scratch for the positions of one coordinate array: appended to without the uniqueness
/// and capacity bookkeeping of an `Array` append (a sixth of reading a position), then copied out into an
/// exactly sized array.
final class PositionBuffer {
    private var base: UnsafeMutablePointer<GeoJSON.Position>
    private var capacity: Int
    /// How many positions it holds.
    private(set) var count = 0

    init() {
        capacity = 256
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    /// Empties it, keeping its memory.
    @inline(__always) func removeAll() { count = 0 }

    @inline(__always) func append(_ position: GeoJSON.Position) {
        if count == capacity { grow() }
        (base + count).initialize(to: position)
        count += 1
    }

    private func grow() {
        let larger = UnsafeMutablePointer<GeoJSON.Position>.allocate(capacity: 2 * capacity)
        larger.moveInitialize(from: base, count: count)
        base.deallocate()
        base = larger
        capacity *= 2
    }

    /// The positions as an exactly sized array (`Position` is plain data: copying is a `memcpy`).
    func array() -> [GeoJSON.Position] {
        // Capacity 0 would write into the empty-array storage all threads share (see IndexBuilder).
        guard count > 0 else { return [] }
        return [GeoJSON.Position](unsafeUninitializedCapacity: count) { target, initialized in
            target.baseAddress!.initialize(from: base, count: count)
            initialized = count
        }
    }
}
