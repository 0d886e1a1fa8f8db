/// The few region numbers one query finds, kept on the stack until they are written to the caller's
/// array in one step.
///
/// Clearing a non-empty array costs a call of the general `replaceSubrange`, and every `append` a
/// uniqueness check; a query that finds two regions paid about a hundred instructions for that alone.
/// ``store(_:_:into:)`` instead overwrites the elements the array already has (one uniqueness check)
/// and only appends or removes the difference in length.
enum HitBuffer {
    /// Room for this many hits; a query that finds more scans again into a buffer that fits.
    static let capacity = 16
    /// Sixteen `Int32` slots.
    typealias Storage = (SIMD8<Int32>, SIMD8<Int32>)
    /// Storage to start from.
    static let empty: Storage = (.zero, .zero)

    /// Makes `result` equal to `hits[0 ..< count]`.
    @inline(__always)
    static func store(_ hits: UnsafePointer<Int32>, _ count: Int, into result: inout [Int32]) {
        var kept = result.count
        if kept == count {
            // Often the same answer as the previous query: then nothing is written.
            var same = true
            result.withUnsafeBufferPointer { old in
                for j in 0 ..< count where old[j] != hits[j] { same = false }
            }
            if same { return }
        }
        while kept > count {
            result.removeLast()
            kept -= 1
        }
        if kept > 0 {
            result.withUnsafeMutableBufferPointer { old in
                for j in 0 ..< kept { old[j] = hits[j] }
            }
        }
        for j in kept ..< count { result.append(hits[j]) }
    }

    /// Makes `result` equal to `hits`.
    static func store(_ hits: [Int32], into result: inout [Int32]) {
        hits.withUnsafeBufferPointer { store($0.baseAddress!, $0.count, into: &result) }
    }
}
