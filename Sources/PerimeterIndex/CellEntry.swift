/// One region's answer for one grid cell (16 bytes).
///
/// - No edges, ``insideFlag`` set: the whole cell is inside the region.
/// - Edges: the region's parity at the cell's reference point (its centre, or the point stored in
///   the first edge record when ``shiftedReferenceFlag`` is set) plus every edge of one polygon
///   that meets the (slightly widened) cell.
/// - ``exactFlag``: when no entry of the region says "inside", the region's own exact test decides.
struct CellEntry: Sendable {
    /// Region number.
    var region: Int32
    /// Bit set of the flags below.
    var flags: UInt32
    /// First record in the edge store.
    var edgeStart: UInt32
    /// Number of records in the edge store (the shifted reference point included).
    var edgeCount: UInt32

    /// The reference point (or, without edges, the whole cell) is inside.
    static let insideFlag: UInt32 = 1
    /// Undecided locally when not inside: call `Region.contains`.
    static let exactFlag: UInt32 = 2
    /// The first edge record holds the reference point instead of the cell centre.
    static let shiftedReferenceFlag: UInt32 = 4
}

/// A polygon edge a→b stored by value next to its cell's other edges (32 bytes).
struct EdgeRecord: Sendable {
    var ax: Double
    var ay: Double
    var bx: Double
    var by: Double
}
