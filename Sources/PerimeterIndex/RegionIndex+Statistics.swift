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
        /// Chains of consecutive edges those edges are stored as (each chain one vertex more than its
        /// edges).
        public var edgeChains: Int
        /// Regions answered by their own exact test on every query (malformed input).
        public var alwaysTestedRegions: Int
        /// Bytes held by the index's own tables (the regions array is shared with the caller).
        public var estimatedMemoryBytes: Int
    }

    /// Size figures of the index.
    /// - Complexity: O(number of records).
    public var statistics: Statistics {
        var entries = 0, full = 0, edgeCopies = 0, chains = 0
        var i = 0
        while i < records.count {
            let header = records[i]
            let end = i + 1 + header.count
            entries += 1
            if header.count == 0 && header.flags == CellEntry.insideFlag { full += 1 }
            if header.count > 0 {
                // The reference point if not the centre, then chains of vertices separated by breaks.
                let first = i + (header.flags & CellEntry.shiftedReferenceFlag != 0 ? 2 : 1)
                var breaks = 0
                for k in first ..< end where records[k].isChainBreak { breaks += 1 }
                chains += breaks + 1
                edgeCopies += (end - first - breaks) - (breaks + 1)
            }
            i = end
        }
        return Statistics(cellSide: grid.side, columns: grid.columns, rows: grid.rows, entries: entries,
                          fullCellEntries: full, edgeCopies: edgeCopies, edgeChains: chains,
                          alwaysTestedRegions: alwaysTested.count, estimatedMemoryBytes: estimatedMemoryBytes)
    }

    /// Bytes held by the index's tables: cell offsets, records (entry headers, reference points,
    /// vertices, chain breaks) and region lists.
    /// - Complexity: O(1).
    public var estimatedMemoryBytes: Int {
        cellStart.capacity * MemoryLayout<UInt32>.stride
            + records.capacity * MemoryLayout<CellRecord>.stride
            + (alwaysTested.capacity + seamCandidates.capacity) * MemoryLayout<Int32>.stride
    }
}
