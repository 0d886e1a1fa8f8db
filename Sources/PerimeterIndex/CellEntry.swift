/// One region's answer for one grid cell, as the builder emits it (16 bytes).
///
/// - No edges, ``insideFlag`` set: the whole cell is inside the region.
/// - Edges: a header record (see ``CellRecord/header(region:flags:count:bound:)``), the reference point
///   when ``shiftedReferenceFlag`` is set, and the polygon's edges that meet the (slightly widened) cell
///   as chains of vertices (see ``CellRecord``); the header holds the region's parity at the cell's
///   reference point: its centre, or, with ``shiftedReferenceFlag``, the other point of the cell stored.
/// - ``exactFlag``: when no entry of the region says "inside", the region's own exact test decides.
///
/// The index itself keeps no `CellEntry`: ``IndexBuilder/groupEntriesByCell()`` turns each into its
/// records, one contiguous run per cell.
struct CellEntry: Sendable {
    /// Region number.
    var region: Int32
    /// Bit set of the flags below.
    var flags: UInt32
    /// First record (the header) in the builder's record store.
    var recordStart: UInt32
    /// Number of records in the builder's record store, the header included; 0 for an entry without
    /// edges (its header is made when the index is laid out).
    var recordCount: UInt32

    /// The reference point (or, without edges, the whole cell) is inside.
    static let insideFlag: UInt32 = 1
    /// Undecided locally when not inside: call `Region.contains`.
    static let exactFlag: UInt32 = 2
    /// The reference point is not the cell centre (the centre lies on an edge); the entry stores it.
    static let shiftedReferenceFlag: UInt32 = 4
    /// Records that may follow a header (the header packs the count into 25 bits).
    static let maximumRecordCount = (1 << 25) - 1
}

/// 16 bytes of a cell's run: an entry header, an entry's reference point, a polygon vertex, or a chain
/// break.
///
/// A cell's run holds its entries one after the other, ascending by region. An entry is a header
/// record, followed — for a parity entry — by its reference point (only when it is not the cell's
/// centre: ``CellEntry/shiftedReferenceFlag``) and its edges. The edges of one ring
/// that meet a cell are mostly consecutive along the ring, so they are stored as chains: a chain of k
/// consecutive edges is its k + 1 vertices, each record one point (`x` longitude, `y` latitude), and
/// every two consecutive records of the entry are an edge — except where a ``chainBreak`` record
/// (both coordinates NaN) separates two chains. Polygon coordinates are finite (others are never
/// rasterized), so a break can be told from a vertex, and the query skips the two pseudo-edges touching
/// it. An edge takes 16 bytes instead of the 32 of a copy of both its ends.
///
/// A header keeps the entry's orientation bound (see ``IndexBuilder/orientationBound(side:reach:)``)
/// in `x`, and in `y`'s bit pattern the region number (low 32 bits), the flags (3 bits), the quadrant
/// mask (4 bits, see ``quadrantShift``) and the number of records that follow it (25 bits): 0 for a
/// full or exact entry.
struct CellRecord: Sendable {
    var x: Double
    var y: Double

    /// The record between two chains of one entry.
    static let chainBreak = CellRecord(x: .nan, y: .nan)

    /// Where a header's quadrant mask starts in `y`'s bit pattern. Bit `quadrantShift + k` is set when
    /// some edge of the entry may meet quadrant k of its cell (``QuadrantRectangles``):
    /// k = 1 when x ≥ the centre's x (else 0), plus 2 when y ≥ the centre's y. A query whose quadrant's
    /// bit is clear has every edge of the entry beside the box of the segment from the centre to
    /// itself, so the entry's answer is its reference parity without reading an edge. Clear for entries
    /// without edges, all four set for an entry whose reference point is not the centre.
    static let quadrantShift: UInt64 = 35
    /// ``CellEntry/exactFlag`` where it lies in a header's `y` bit pattern.
    static let exactBit = UInt64(CellEntry.exactFlag) << 32
    /// A mask with every quadrant set.
    static let allQuadrants: UInt32 = 0b1111

    /// A header record.
    static func header(region: Int32, flags: UInt32, quadrants: UInt32 = 0, count: Int, bound: Double) -> CellRecord {
        let meta = UInt64(UInt32(bitPattern: region)) | UInt64(flags & 7) << 32
            | UInt64(quadrants & allQuadrants) << quadrantShift | UInt64(count) << 39
        return CellRecord(x: bound, y: Double(bitPattern: meta))
    }

    /// A header's region number.
    @inline(__always) var region: Int32 { Int32(truncatingIfNeeded: y.bitPattern) }
    /// A header's flags (``CellEntry/insideFlag`` …).
    @inline(__always) var flags: UInt32 { UInt32(truncatingIfNeeded: y.bitPattern >> 32) & 7 }
    /// A header's quadrant mask (see ``quadrantShift``).
    @inline(__always) var quadrants: UInt32 { UInt32(truncatingIfNeeded: y.bitPattern >> Self.quadrantShift) & Self.allQuadrants }
    /// The number of records after a header (reference point if stored, vertices and chain breaks).
    @inline(__always) var count: Int { Int(truncatingIfNeeded: y.bitPattern >> 39) }
    /// A header's orientation bound.
    @inline(__always) var bound: Double { x }
    /// Whether this record is a chain break.
    @inline(__always) var isChainBreak: Bool { x.isNaN }
}

/// A polygon edge a→b, as the builder collects one polygon's edges (`x` longitude, `y` latitude).
struct PolygonEdge: Sendable {
    var ax: Double
    var ay: Double
    var bx: Double
    var by: Double
}
