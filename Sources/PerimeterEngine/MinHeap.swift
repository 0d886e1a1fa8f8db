/// An element of a ``MinHeap``: says which of two elements comes out first.
protocol HeapElement {
    static func precedes(_ a: Self, _ b: Self) -> Bool
}

/// A binary min-heap: the element that precedes all others comes out first.
struct MinHeap<Element: HeapElement> {
    private var storage: [Element] = []

    var count: Int { storage.count }
    var isEmpty: Bool { storage.isEmpty }
    var first: Element? { storage.first }

    /// - Complexity: O(log n).
    mutating func push(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Element.precedes(storage[child], storage[parent]) else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the first element.
    /// - Complexity: O(log n).
    mutating func pop() -> Element? {
        guard let first = storage.first else { return nil }
        let last = storage.removeLast()
        if !storage.isEmpty {
            storage[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < storage.count, Element.precedes(storage[left], storage[smallest]) { smallest = left }
                if right < storage.count, Element.precedes(storage[right], storage[smallest]) { smallest = right }
                if smallest == parent { break }
                storage.swapAt(parent, smallest)
                parent = smallest
            }
        }
        return first
    }
}

extension MinHeap: Sendable where Element: Sendable {}
