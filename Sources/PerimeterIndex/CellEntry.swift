/// One region's answer for one grid cell, as the builder emits it (16 bytes).
///
/// - No edges, ``insideFlag`` set: the whole cell is inside the region.
/// - Edges: a header record (see ``CellRecord/header(region:flags:boxMask:quadrantParities:count:bound:)``),
///   the reference point when ``shiftedReferenceFlag`` is set, and the polygon's edges that meet the
///   (slightly widened) cell as chains of vertices (see ``CellRecord``); the header holds the polygon's
///   parity at the centres of the cell's four quadrants (``CellRecord/quadrantParityShift``), or, with
///   ``shiftedReferenceFlag``, at the point of the cell stored.
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

    /// The builder's reference point (the cell's centre, or the stored point with
    /// ``shiftedReferenceFlag``; without edges, the whole cell) is inside.
    static let insideFlag: UInt32 = 1
    /// Undecided locally when not inside: call `Region.contains`.
    static let exactFlag: UInt32 = 2
    /// The entry stores its reference point after the header, and the query starts there: some centre of
    /// a quadrant of the cell lies on an edge (then the reference is the cell's centre, or, if that too
    /// lies on an edge, another point of the cell).
    static let shiftedReferenceFlag: UInt32 = 4
    /// Records that may follow a header (the header packs the count into 29 bits).
    static let maximumRecordCount = (1 << 29) - 1
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
/// A header keeps in `x`'s bit pattern the entry's orientation bound (see
/// ``IndexBuilder/orientationBound(side:reach:)``) rounded up to a `Float` (high 32 bits), its box mask
/// (low 16 bits, see ``subCellCount``) and its quadrant parities (the 4 bits above, see
/// ``quadrantParityShift``), and in `y`'s bit pattern the region number (low 32 bits), the flags
/// (3 bits) and the number of records that follow it (29 bits): 0 for a full or exact entry.
struct CellRecord: Sendable {
    var x: Double
    var y: Double

    /// The record between two chains of one entry.
    static let chainBreak = CellRecord(x: .nan, y: .nan)

    /// The number of sub-cells of a cell, and of bits in a header's box mask.
    ///
    /// The cell is cut in four quadrants by its centre lines, and each quadrant in four again by the
    /// quadrant's own centre lines (``GridLayout/quadrantCenterX(_:east:)``): a 4 × 4 grid of sub-cells,
    /// sub-cell i + 4j being the i-th from the west and the j-th from the south. The outer sides are
    /// pushed outward by twice ``GridLayout/margin`` (a point the lookup maps to the cell lies at most
    /// ≈10⁻¹³° outside it); the inner lines are exact, as the query compares with them exactly. A query q
    /// of the cell lies in one of them — its quadrant by q ≥ the cell's centre, its sub-cell by q ≥ the
    /// quadrant's centre (a point on a line takes the east or north side) — and so does the segment from
    /// its quadrant's centre to q, the reference segment of the query (``quadrantParityShift``). Bit i of
    /// the mask is set when the box of some edge of the entry meets sub-cell i. A query whose sub-cell's
    /// bit is clear has every edge of the entry strictly beside the box of its reference segment, so the
    /// entry's answer is its quadrant's parity without reading an edge. The mask is 0 for entries without
    /// edges, and has every bit set for an entry with a stored reference point.
    static let subCellCount = 16
    /// A box mask with every sub-cell set.
    static let allSubCells: UInt32 = 0xffff
    /// Where a header's quadrant parities start in `x`'s bit pattern. Bit `quadrantParityShift + k` is
    /// the entry's parity (1: inside its polygon) at the centre of quadrant k of the cell, k = 1 for the
    /// east half (x ≥ the centre's) plus 2 for the north half: the reference point of a query in that
    /// quadrant, a quarter of the side from the cell's centre in both coordinates. For an entry
    /// without edges all four are its answer (inside or not); for an entry with a stored reference point
    /// (``CellEntry/shiftedReferenceFlag``) all four are that point's parity, and the query starts there.
    static let quadrantParityShift: UInt64 = 16
    /// ``CellEntry/exactFlag`` where it lies in a header's `y` bit pattern.
    static let exactBit = UInt64(CellEntry.exactFlag) << 32

    /// A header record. `bound` is kept rounded up to a `Float` (a larger bound is as safe, only less
    /// often decisive). `quadrantParities` defaults to four copies of the ``CellEntry/insideFlag``.
    static func header(region: Int32, flags: UInt32, boxMask: UInt32 = 0, quadrantParities: UInt32? = nil,
                       count: Int, bound: Double) -> CellRecord {
        let meta = UInt64(UInt32(bitPattern: region)) | UInt64(flags & 7) << 32 | UInt64(count) << 35
        var rounded = Float(bound)
        if Double(rounded) < bound { rounded = rounded.nextUp }
        let parities = quadrantParities ?? (flags & CellEntry.insideFlag != 0 ? 0b1111 : 0)
        let packed = UInt64(rounded.bitPattern) << 32 | UInt64(parities & 0b1111) << quadrantParityShift
            | UInt64(boxMask & allSubCells)
        return CellRecord(x: Double(bitPattern: packed), y: Double(bitPattern: meta))
    }

    /// A header's region number.
    @inline(__always) var region: Int32 { Int32(truncatingIfNeeded: y.bitPattern) }
    /// A header's flags (``CellEntry/insideFlag`` …).
    @inline(__always) var flags: UInt32 { UInt32(truncatingIfNeeded: y.bitPattern >> 32) & 7 }
    /// A header's box mask (see ``subCellCount``).
    @inline(__always) var boxMask: UInt32 { UInt32(truncatingIfNeeded: x.bitPattern) & Self.allSubCells }
    /// A header's quadrant parities (bit k for quadrant k, see ``quadrantParityShift``).
    @inline(__always) var quadrantParities: UInt32 {
        UInt32(truncatingIfNeeded: x.bitPattern >> Self.quadrantParityShift) & 0b1111
    }
    /// The number of records after a header (reference point if stored, vertices and chain breaks).
    @inline(__always) var count: Int { Int(truncatingIfNeeded: y.bitPattern >> 35) }
    /// A header's orientation bound (rounded up to a `Float`: at least the bound the builder computed).
    @inline(__always) var bound: Double { Double(Float(bitPattern: UInt32(truncatingIfNeeded: x.bitPattern >> 32))) }
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
