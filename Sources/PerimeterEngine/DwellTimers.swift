/// A pending dwell: device `device` is due a dwell in fence `slot` at `due`, for the visit that began
/// with the device's update number `visitSequence`.
struct DwellTimer: Sendable, HeapElement {
    var due: Double
    var device: Int32
    var slot: Int32
    var visitSequence: UInt64

    static func precedes(_ a: DwellTimer, _ b: DwellTimer) -> Bool { a.due < b.due }
}

/// Pending dwells, earliest first.
///
/// Timers are never removed early: a visit that ends (or whose dwell fires on an update) leaves its timer
/// behind, and ``DetectionEngine/advance(to:into:)`` discards it when it surfaces.
struct DwellTimers: Sendable {
    private var heap = MinHeap<DwellTimer>()

    var count: Int { heap.count }

    /// - Complexity: O(log n).
    mutating func push(_ timer: DwellTimer) { heap.push(timer) }

    /// Removes and returns the earliest timer if it is due by `time`.
    /// - Complexity: O(log n).
    mutating func popFirst(dueBy time: Double) -> DwellTimer? {
        guard let first = heap.first, first.due <= time else { return nil }
        return heap.pop()
    }
}
