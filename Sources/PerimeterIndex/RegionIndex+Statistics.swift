/// Size figures of a ``RegionIndex``.
extension RegionIndex {
    /// What the index holds and how big it is.
    public struct Statistics: Hashable, Sendable {
        /// Side of a grid cell in degrees.
        public var cellSide: Double
        /// Grid columns.
        public var columns: Int
        /// Grid rows.
        public var rows: Int
        /// (cell, region) entries.
        public var entries: Int
        /// Entries that answer "whole cell inside" with no further work.
        public var fullCellEntries: Int
        /// Polygon edges stored in cells (an edge meeting several cells counts in each).
        public var edgeCopies: Int
        /// Regions answered by their own exact test on every query (malformed input).
        public var alwaysTestedRegions: Int
        /// Bytes held by the index's own tables (the regions array is shared with the caller).
        public var estimatedMemoryBytes: Int
    }

    /// Size figures of the index.
    /// - Complexity: O(number of entries).
    public var statistics: Statistics {
        Statistics(cellSide: grid.side, columns: grid.columns, rows: grid.rows, entries: entries.count,
                   fullCellEntries: entries.reduce(0) { $0 + ($1.edgeCount == 0 && $1.flags == CellEntry.insideFlag ? 1 : 0) },
                   edgeCopies: edges.count, alwaysTestedRegions: alwaysTested.count,
                   estimatedMemoryBytes: estimatedMemoryBytes)
    }

    /// Bytes held by the index's tables: cell offsets, entries, edge records and region lists.
    /// - Complexity: O(1).
    public var estimatedMemoryBytes: Int {
        cellStart.capacity * MemoryLayout<UInt32>.stride
            + entries.capacity * MemoryLayout<CellEntry>.stride
            + edges.capacity * MemoryLayout<EdgeRecord>.stride
            + (alwaysTested.capacity + seamCandidates.capacity) * MemoryLayout<Int32>.stride
    }
}
