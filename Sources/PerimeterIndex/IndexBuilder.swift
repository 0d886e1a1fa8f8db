import Dispatch
import Foundation
import PerimeterGeometry

/// How one region is put into the grid.
enum RegionPlan {
    /// Polygons (union), each even-odd over its rings; `buffer` metres around their boundary.
    case polygons([Polygon], buffer: Double)
    /// Points within `reach` metres of `center`.
    case circle(center: Coordinate, reach: Double)
    /// Points within `reach` metres of the segments of `lines`.
    case corridor(lines: [[Coordinate]], reach: Double)
    /// Malformed input: test with `Region.contains` on every query.
    case always

    /// Validates a region and picks its plan.
    init(_ region: Region) {
        let buffer = region.buffer
        guard buffer.isFinite, buffer >= 0 else { self = .always; return }
        switch region.shape {
        case .polygons(let polygons):
            let finite = polygons.allSatisfy { $0.rings.allSatisfy { $0.allSatisfy(\.isFinite) } }
            self = finite ? .polygons(polygons, buffer: buffer) : .always
        case .circle(let center, let radius):
            let reach = radius + buffer
            guard center.isFinite, center.latitude >= -90, center.latitude <= 90, radius.isFinite, radius >= 0
            else { self = .always; return }
            self = .circle(center: center, reach: reach)
        case .corridor(let lines, let radius):
            guard radius.isFinite, radius >= 0, !lines.isEmpty,
                  lines.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isFinite && abs($0.latitude) <= 90 } })
            else { self = .always; return }
            self = .corridor(lines: lines, reach: radius + buffer)
        }
    }
}

extension Coordinate {
    /// Both components finite.
    var isFinite: Bool { latitude.isFinite && longitude.isFinite }
}

/// Builds a ``RegionIndex``: plans regions, sizes the grid, rasterizes, groups entries by cell.
struct IndexBuilder {
    let regions: [Region]
    var plans: [RegionPlan] = []
    var grid = GridLayout.empty
    var alwaysTested: [Int32] = []
    var seamCandidates: [Int32] = []

    /// Entries in emission order (ascending region), with their cells.
    var pendingCells: [UInt32] = []
    var pendingEntries: [CellEntry] = []
    /// The record store: each parity entry's records (``emitBoundary(cell:region:inside:reference:_:)``).
    var records: [CellRecord] = []

    // Scratch buffers reused across polygons.
    var polygonEdges: [PolygonEdge] = []
    var pairs: [UInt64] = []
    var cellKeys: [UInt64] = []
    /// The radix sort's second buffer (``sortPairsByCell()``).
    var radixScratch: [UInt64] = []

    /// Rasterized parts of the regions, beyond `self`'s (see ``rasterizeInParts(work:expected:)``):
    /// regions in ascending blocks, each part's entries pointing into its own record store.
    var parts: [RasterPart] = []

    /// Target number of grid cells per polygon edge. On gen_workload.py's full workload (docs/benchmarks.md,
    /// "Session 16 — bare queries"): 1.5 cells give a query 18 % fewer instructions and 0.9 fewer
    /// mispredicted branches than 1.0, for 106 MiB of index instead of 87 (still below the C
    /// yardstick's 113); 2.0 gave 17 % fewer again, for 123 MiB and a 40 % longer build.
    static let cellsPerEdge = 1.5
    /// Upper bound on the estimated number of (cell, region) entries.
    static let maxEstimatedEntries = 12_000_000.0
    /// Upper bound on the number of grid cells.
    static let maxCells = 1 << 23
    /// Smallest cell side in degrees (far above the assignment margin).
    static let minSide = 1e-5

    /// Forces the cell side (tests); `nil` chooses it from the data.
    let forcedSide: Double?

    init(regions: [Region], forcedSide: Double? = nil) {
        self.regions = regions
        self.forcedSide = forcedSide
    }

    /// Plans, sizes the grid and rasterizes. `threads`: how many threads rasterize (`nil`: up to
    /// ``maximumThreads`` on the machine's cores, one for little work).
    mutating func build(threads: Int? = nil) {
        plans = regions.map(RegionPlan.init)
        var boxes: [(region: Int, box: WrappedBox)] = []
        var work = 0.0
        for (r, plan) in plans.enumerated() {
            let extent = Self.extent(of: plan)
            if case .always = plan { alwaysTested.append(Int32(r)); continue }
            if extent.contains(where: { $0.minX <= -180 || $0.maxX >= 180 }) { seamCandidates.append(Int32(r)) }
            for box in extent { boxes.append((r, box)) }
            work += Self.work(of: plan)
        }
        grid = Self.chooseGrid(boxes: boxes.map(\.box), work: work, forcedSide: forcedSide)
        guard grid.cellCount > 0 else { return }
        // Room for what the regions will likely emit (about two records and one entry per edge at one
        // cell per edge), so the big arrays are not copied each time they double: growing them took
        // more of an import's index build than rasterizing (memmove and page faults, perf). Room not used
        // is address space only; the index keeps exact-size copies (``groupEntriesByCell()``).
        let expected = Int(min(work, 1e9))
        let threads = threads
            ?? (work >= Self.parallelWork ? min(Self.maximumThreads, ProcessInfo.processInfo.activeProcessorCount) : 1)
        if threads > 1, plans.count > 1 {
            rasterizeInParts(threads, work: work)
        } else {
            reserve(expected)
            rasterize(plans.indices)
        }
        alwaysTested.sort()
    }

    /// Reserves room for what regions with `expected` edges will likely emit.
    mutating func reserve(_ expected: Int) {
        records.reserveCapacity(3 * expected)
        pendingEntries.reserveCapacity(2 * expected)
        pendingCells.reserveCapacity(2 * expected)
    }

    /// Rasterizes the regions in `range`, in order.
    mutating func rasterize(_ range: Range<Int>) {
        for r in range {
            let entryMark = pendingEntries.count, recordMark = records.count
            if !add(plans[r], region: Int32(r)) {
                pendingEntries.removeSubrange(entryMark...)
                pendingCells.removeSubrange(entryMark...)
                records.removeSubrange(recordMark...)
                alwaysTested.append(Int32(r))
            }
        }
    }

    /// At most this many threads rasterize one index.
    static let maximumThreads = 4
    /// Below this much work (in edges) the regions are rasterized on the calling thread: starting
    /// threads would cost more than it saves.
    static let parallelWork = 200_000.0

    /// Rasterizes the regions in `threads` blocks of consecutive regions of about equal work, each on a
    /// thread of Dispatch's pool with a builder of its own; the first block's output stays in `self`,
    /// the others' go to ``parts``. Each region is rasterized exactly as on one thread, and
    /// ``groupEntriesByCell()`` reads the blocks in region order, so the index is the same.
    mutating func rasterizeInParts(_ threads: Int, work: Double) {
        var cuts = [0]
        var done = 0.0
        for (r, plan) in plans.enumerated() where cuts.count < threads {
            done += Self.work(of: plan)
            if done >= work * Double(cuts.count) / Double(threads) { cuts.append(r + 1) }
        }
        cuts.append(plans.count)
        let bounds = cuts
        var workers = (0..<bounds.count - 1).map { _ in
            var worker = IndexBuilder(regions: [], forcedSide: forcedSide)
            worker.plans = plans
            worker.grid = grid
            return worker
        }
        workers.withUnsafeMutableBufferPointer { buffer in
            let shared = SharedBuilders(buffer)
            DispatchQueue.concurrentPerform(iterations: shared.builders.count) { k in
                let range = bounds[k] ..< bounds[k + 1]
                let blockWork = range.reduce(0.0) { $0 + Self.work(of: shared.builders[k].plans[$1]) }
                shared.builders[k].reserve(Int(min(blockWork, 1e9)))
                shared.builders[k].rasterize(range)
                shared.builders[k].plans = []
            }
        }
        let first = workers.removeFirst()
        pendingCells = first.pendingCells
        pendingEntries = first.pendingEntries
        records = first.records
        alwaysTested += first.alwaysTested
        for worker in workers {
            alwaysTested += worker.alwaysTested
            parts.append(RasterPart(cells: worker.pendingCells, entries: worker.pendingEntries, records: worker.records))
        }
    }

    /// Rasterizes one region; `false` if it must be tested exactly on every query instead.
    mutating func add(_ plan: RegionPlan, region: Int32) -> Bool {
        switch plan {
        case .always:
            return true
        case .polygons(let polygons, let buffer):
            for polygon in polygons where !addPolygon(polygon, region: region) { return false }
            addWrappedCopies(polygons, region: region)
            if buffer > 0 { addBufferZone(polygons, buffer: buffer, region: region) }
            return true
        case .circle(let center, let reach):
            addCircle(center: center, reach: reach, region: region)
            return true
        case .corridor(let lines, let reach):
            addCorridor(lines: lines, reach: reach, region: region)
            return true
        }
    }

    /// Boxes (in grid coordinates) holding every point the region can contain.
    static func extent(of plan: RegionPlan) -> [WrappedBox] {
        switch plan {
        case .always:
            return []
        case .polygons(let polygons, let buffer):
            var result: [WrappedBox] = []
            for polygon in polygons {
                let b = polygon.boundingBox
                guard b.minLongitude <= b.maxLongitude else { continue }
                result.append(WrappedBox(minX: b.minLongitude, minY: b.minLatitude,
                                         maxX: b.maxLongitude, maxY: b.maxLatitude, shift: 0))
                // `Polygon.contains` also tries longitude ± 360 for boxes reaching past ±180.
                for shift in [-360.0, 360.0] where b.minLongitude + shift < 180 && b.maxLongitude + shift > -180 {
                    result.append(WrappedBox(minX: max(-180, b.minLongitude + shift), minY: b.minLatitude,
                                             maxX: min(180, b.maxLongitude + shift), maxY: b.maxLatitude, shift: -shift))
                }
                if buffer > 0 {
                    result += reachBoxes(minX: b.minLongitude, minY: b.minLatitude, maxX: b.maxLongitude,
                                         maxY: b.maxLatitude, metres: buffer)
                }
            }
            return result
        case .circle(let center, let reach):
            return reachBoxes(minX: center.longitude, minY: center.latitude, maxX: center.longitude,
                              maxY: center.latitude, metres: reach)
        case .corridor(let lines, let reach):
            var result: [WrappedBox] = []
            for line in lines {
                var unwrapped = line
                for k in unwrapped.indices.dropFirst() {
                    let a = unwrapped[k - 1], b = unwrapped[k]
                    unwrapped[k].longitude = b.longitude + 360 * ((a.longitude - b.longitude) / 360).rounded()
                }
                guard let b = BoundingBox(covering: unwrapped) else { continue }
                result += reachBoxes(minX: b.minLongitude, minY: b.minLatitude, maxX: b.maxLongitude,
                                     maxY: b.maxLatitude, metres: reach)
            }
            return result
        }
    }

    /// The boxes of points within `metres` of the box, wrapped into −180…180.
    static func reachBoxes(minX: Double, minY: Double, maxX: Double, maxY: Double, metres: Double) -> [WrappedBox] {
        let reach = GeodesicBounds.reach(metres: metres, latLo: minY, latHi: maxY)
        let lo = max(-90, minY - reach.latitude), hi = min(90, maxY + reach.latitude)
        guard let dLon = reach.longitude else {
            return [WrappedBox(minX: -180, minY: lo, maxX: 180, maxY: hi, shift: 0)]
        }
        return LongitudeWrap.boxes(minX: minX - dLon, minY: lo, maxX: maxX + dLon, maxY: hi)
    }

    /// Rough amount of rasterization work of a region, in "edges".
    static func work(of plan: RegionPlan) -> Double {
        switch plan {
        case .always: return 0
        case .polygons(let polygons, _): return Double(polygons.reduce(0) { $0 + $1.rings.reduce(0) { $0 + $1.count } })
        case .circle: return 4
        case .corridor(let lines, _): return Double(lines.reduce(0) { $0 + $1.count }) * 2
        }
    }

    /// Picks the cell side: about ``cellsPerEdge`` cells per edge over the covered area, then
    /// coarser if the estimated entries or cells would be too many.
    static func chooseGrid(boxes: [WrappedBox], work: Double, forcedSide: Double? = nil) -> GridLayout {
        guard let first = boxes.first else { return .empty }
        var minX = first.minX, minY = first.minY, maxX = first.maxX, maxY = first.maxY
        for b in boxes {
            minX = min(minX, b.minX); minY = min(minY, b.minY)
            maxX = max(maxX, b.maxX); maxY = max(maxY, b.maxY)
        }
        let width = max(maxX - minX, minSide), height = max(maxY - minY, minSide)
        let target = min(max(work * cellsPerEdge, 64), Double(maxCells) / 2)
        var side = max((width * height / target).squareRoot(), minSide)
        if let forcedSide { side = max(forcedSide, minSide) }
        for _ in 0..<64 where forcedSide == nil {
            var estimate = 0.0
            for b in boxes { estimate += ((b.maxX - b.minX) / side + 2) * ((b.maxY - b.minY) / side + 2) }
            let cells = (width / side + 4) * (height / side + 4)
            if estimate <= maxEstimatedEntries && cells <= Double(maxCells) { break }
            side *= 1.25
        }
        let columns = Int((width / side).rounded(.up)) + 4
        let rows = Int((height / side).rounded(.up)) + 4
        // A non-round origin keeps cell centres off round coordinates that hand-made shapes use.
        let offset = side * 1.381966011250105
        return GridLayout(originX: minX - offset, originY: minY - offset, side: side, inverseSide: 1 / side,
                          columns: columns, rows: rows)
    }

    /// Lays the pending entries out by cell (stable, so region order is kept within a cell): each
    /// entry becomes its records (an entry without edges, a header alone), and a cell's entries one
    /// contiguous run, so that a query reads one run of memory.
    /// - Complexity: O(C + R) for C entries and R records; each entry's records are copied once,
    ///   straight to their place.
    /// With ``parts`` (a parallel build) the parts are read after `self`'s own entries, in order: the
    /// blocks hold ascending regions, so region order within a cell is kept just the same.
    mutating func groupEntriesByCell() -> (cellStart: [UInt32], records: [CellRecord]) {
        let all = [RasterPart(cells: pendingCells, entries: pendingEntries, records: records)] + parts
        pendingCells = []
        pendingEntries = []
        records = []
        parts = []
        let cellCount = grid.cellCount
        var start = [UInt32](repeating: 0, count: cellCount + 1)
        for part in all {
            for k in part.cells.indices {
                start[Int(part.cells[k]) + 1] += max(1, part.entries[k].recordCount)
            }
        }
        for c in 0..<cellCount { start[c + 1] += start[c] }
        let total = Int(start[cellCount])
        var cursor = start
        // Never with capacity 0: the standard library then writes the count into the one empty-array
        // storage every thread shares (ThreadSanitizer reports that write when two indexes of no
        // edges are built at once).
        let laidOut = total == 0 ? [] : [CellRecord](unsafeUninitializedCapacity: total) { target, count in
            guard let target = target.baseAddress else { count = 0; return }
            cursor.withUnsafeMutableBufferPointer { cursor in
                for part in all {
                    part.records.withUnsafeBufferPointer { source in
                        for k in part.cells.indices {
                            let cell = Int(part.cells[k]), entry = part.entries[k]
                            let at = target + Int(cursor[cell])
                            if entry.recordCount == 0 {
                                at.initialize(to: .header(region: entry.region, flags: entry.flags, count: 0, bound: 0))
                                cursor[cell] += 1
                            } else {
                                at.initialize(from: source.baseAddress! + Int(entry.recordStart), count: Int(entry.recordCount))
                                cursor[cell] += entry.recordCount
                            }
                        }
                    }
                }
            }
            count = total
        }
        return (start, laidOut)
    }

    /// Records one entry.
    @inline(__always)
    mutating func emit(cell: Int, _ entry: CellEntry) {
        pendingCells.append(UInt32(cell))
        pendingEntries.append(entry)
    }

    /// Records an entry that defers to `Region.contains`.
    @inline(__always)
    mutating func emitExact(cell: Int, region: Int32) {
        emit(cell: cell, CellEntry(region: region, flags: CellEntry.exactFlag, recordStart: 0, recordCount: 0))
    }

    /// Records an entry saying the whole cell is inside.
    @inline(__always)
    mutating func emitFull(cell: Int, region: Int32) {
        emit(cell: cell, CellEntry(region: region, flags: CellEntry.insideFlag, recordStart: 0, recordCount: 0))
    }

    /// Visits every cell of the grid meeting the box.
    func forEachCell(in box: WrappedBox, _ body: (_ cell: Int, _ column: Int, _ row: Int) -> Void) {
        guard let rows = grid.rows(from: box.minY, to: box.maxY),
              let columns = grid.columns(from: box.minX, to: box.maxX) else { return }
        for row in rows {
            for column in columns { body(row * grid.columns + column, column, row) }
        }
    }
}

/// What one block of regions rasterized: its entries, their cells, and the record store they point into.
struct RasterPart {
    var cells: [UInt32]
    var entries: [CellEntry]
    var records: [CellRecord]
}

/// Hands the builders to `concurrentPerform`'s closure. Sound because iteration k touches only
/// builder k, and the buffer outlives the call.
private struct SharedBuilders: @unchecked Sendable {
    let builders: UnsafeMutableBufferPointer<IndexBuilder>
    init(_ builders: UnsafeMutableBufferPointer<IndexBuilder>) { self.builders = builders }
}
