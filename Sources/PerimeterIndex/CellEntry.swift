/// One region's answer for one grid cell, as the builder emits it (16 bytes).
///
/// - No edges, ``insideFlag`` set: the whole cell is inside the region.
/// - Edges: a header record (see ``EdgeRecord/header(region:flags:edgeCount:reference:bound:)``) followed
///   by every edge of one polygon that meets the (slightly widened) cell; the header holds the region's
///   parity at the cell's reference point (its centre, or another point of the cell when
///   ``shiftedReferenceFlag`` is set).
/// - ``exactFlag``: when no entry of the region says "inside", the region's own exact test decides.
///
/// The index itself keeps no `CellEntry`: ``IndexBuilder/groupEntriesByCell()`` turns each into a header
/// record followed by its edges, one contiguous run per cell.
struct CellEntry: Sendable {
    /// Region number.
    var region: Int32
    /// Bit set of the flags below.
    var flags: UInt32
    /// First record (the header) in the builder's edge store.
    var edgeStart: UInt32
    /// Number of records in the builder's edge store, the header included; 0 for an entry without edges.
    var edgeCount: UInt32

    /// The reference point (or, without edges, the whole cell) is inside.
    static let insideFlag: UInt32 = 1
    /// Undecided locally when not inside: call `Region.contains`.
    static let exactFlag: UInt32 = 2
    /// The reference point is not the cell centre (the centre lies on an edge).
    static let shiftedReferenceFlag: UInt32 = 4
    /// Edges an entry may hold (the header packs the count into 29 bits).
    static let maximumEdgeCount = (1 << 29) - 1
}

/// 32 bytes of a cell's run: a polygon edge a→b stored by value next to its cell's other edges, or the
/// header of an entry.
///
/// A header keeps its reference point in `ax`, `ay`, the entry's orientation bound (see
/// ``IndexBuilder/orientationBound(side:reach:)``) in `bx`, and in `by`'s bit pattern the region number
/// (low 32 bits), the flags (3 bits) and the number of edge records that follow it (29 bits). Putting the
/// header in the same run as its edges makes a cell one contiguous read: the query's second dependent
/// cache miss (entries, then their edges elsewhere) is gone.
struct EdgeRecord: Sendable {
    var ax: Double
    var ay: Double
    var bx: Double
    var by: Double

    /// A header record.
    static func header(region: Int32, flags: UInt32, edgeCount: Int, reference: (x: Double, y: Double),
                       bound: Double) -> EdgeRecord {
        let meta = UInt64(UInt32(bitPattern: region)) | UInt64(flags & 7) << 32 | UInt64(edgeCount) << 35
        return EdgeRecord(ax: reference.x, ay: reference.y, bx: bound, by: Double(bitPattern: meta))
    }

    /// A header's region number.
    @inline(__always) var region: Int32 { Int32(truncatingIfNeeded: by.bitPattern) }
    /// A header's flags (``CellEntry/insideFlag`` …).
    @inline(__always) var flags: UInt32 { UInt32(truncatingIfNeeded: by.bitPattern >> 32) & 7 }
    /// The number of edge records after a header.
    @inline(__always) var edgeCount: Int { Int(truncatingIfNeeded: by.bitPattern >> 35) }
}
