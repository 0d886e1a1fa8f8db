import PerimeterGeometry

extension RegionIndex {
    /// Builds the index; region number = position in `regions`.
    ///
    /// Regions the grid cannot reason about (non-finite coordinates, radius or buffer, a negative
    /// radius or buffer, a corridor without points) are not dropped: they are tested with
    /// `Region.contains` on every query (see ``Statistics/alwaysTestedRegions``).
    /// - Complexity: O(V + C) for V polygon vertices and C (cell, region) entries, plus a sort of
    ///   each polygon's (cell, edge) pairs; about 0.5 s of CPU for 10,000 regions with 1.5 M vertices.
    ///   With enough work (``IndexBuilder/parallelWork``) the regions are rasterized on up to four
    ///   threads of Dispatch's pool, in blocks of consecutive regions; the index is the same.
    public init(regions: [Region]) {
        self.init(regions: regions, forcedCellSide: nil)
    }

    /// Builds the index with a given cell side in degrees (`nil`: chosen from the data).
    /// With `threads`, rasterizes on that many threads whatever the amount of work (tests).
    init(regions: [Region], forcedCellSide: Double?, threads: Int? = nil) {
        var builder = IndexBuilder(regions: regions, forcedSide: forcedCellSide)
        builder.build(threads: threads)
        self.regions = regions
        self.grid = builder.grid
        self.gridExtent = SIMD2(Double(builder.grid.columns), Double(builder.grid.rows))
        self.alwaysTested = builder.alwaysTested
        self.seamCandidates = builder.seamCandidates
        let (cellStart, records) = builder.groupEntriesByCell()
        self.cellStart = cellStart
        self.records = records
        self.answerCapacity = Self.answerCapacity(cellStart: cellStart, records: records,
                                                  alwaysTested: builder.alwaysTested.count)
    }
}
