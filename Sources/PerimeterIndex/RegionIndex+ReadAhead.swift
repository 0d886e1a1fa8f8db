import PerimeterGeometry

extension RegionIndex {
    /// How many queries ahead ``readAhead(_:step:)`` works: a batch calls step 0 for the point three
    /// queries ahead, step 1 for the one two ahead and step 2 for the next.
    public static let readAheadDistance = 3

    /// Reads one level of the memory a later query of `point` will read, and returns a word of it
    /// (fold it into something the caller keeps, so that the read is not optimised away).
    ///
    /// A query reads three places one after the other — the cell's slot in the cell table, the cell's
    /// first record (an entry header), the records after it — and on a big index each is a cache miss that
    /// the next cannot start before. A batch that calls step 0 for the point three ahead, step 1 for the one two
    /// ahead and step 2 for the next one starts those misses for three points at once, each level's
    /// address read from the level loaded one query earlier, so that the query itself finds its memory
    /// in cache. It changes no answer; a point outside the grid reads nothing.
    /// - Complexity: O(1), one read.
    @inline(__always)
    public func readAhead(_ point: Coordinate, step: Int) -> UInt64 {
        guard let (column, row) = grid.cell(x: point.longitude, y: point.latitude) else { return 0 }
        let cell = row * grid.columns + column
        let first = cellStart[cell]
        if step == 0 { return UInt64(first) }
        guard Int(first) < records.count else { return 0 }
        let header = records[Int(first)]
        // Four 16-byte records on: the cache line after the header's, wherever in its line the header is.
        let next = Int(first) + 4
        if step == 1 || header.count < 4 || next >= records.count { return header.y.bitPattern }
        return records[next].x.bitPattern
    }
}
