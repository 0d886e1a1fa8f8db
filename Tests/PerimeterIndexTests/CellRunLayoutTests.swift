import PerimeterGeometry
import PerimeterTestSupport
import Testing
@testable import PerimeterIndex

/// The cell runs' layout: a parity entry's edges stored as chains of vertices (``CellRecord``). Every
/// stored edge must be an edge of the polygon, every edge meeting the cell must be stored once, and the
/// answers must stay those of `Region.contains` where chains start, end and break.
@Suite struct CellRunLayoutTests {
    /// A parity entry decoded: its chains, and its edges (pseudo-edges around breaks left out).
    struct DecodedEntry {
        var region: Int32
        var chains: [[CellRecord]]
        var edges: [PolygonEdge] {
            chains.flatMap { chain in
                zip(chain, chain.dropFirst()).map { PolygonEdge(ax: $0.x, ay: $0.y, bx: $1.x, by: $1.y) }
            }
        }
    }

    /// Every parity entry of the index, cell by cell.
    static func parityEntries(_ index: RegionIndex) -> [(cell: Int, entry: DecodedEntry)] {
        var result: [(Int, DecodedEntry)] = []
        for cell in 0 ..< index.grid.cellCount {
            var i = Int(index.cellStart[cell])
            let end = Int(index.cellStart[cell + 1])
            while i < end {
                let header = index.records[i]
                let next = i + 1 + header.count
                if header.count > 0 {
                    var chains: [[CellRecord]] = [[]]
                    let first = i + (header.flags & CellEntry.shiftedReferenceFlag != 0 ? 2 : 1)
                    for record in index.records[first ..< next] {
                        if record.isChainBreak { chains.append([]) } else { chains[chains.count - 1].append(record) }
                    }
                    result.append((cell, DecodedEntry(region: header.region, chains: chains)))
                }
                i = next
            }
        }
        return result
    }

    /// The edges of a ring as `Polygon.contains` takes them (closed implicitly), keyed by their ends' bits.
    static func edgeKeys(_ rings: [[Coordinate]]) -> Set<[UInt64]> {
        var keys = Set<[UInt64]>()
        for ring in rings {
            guard var a = ring.last else { continue }
            for b in ring {
                keys.insert([a.longitude.bitPattern, a.latitude.bitPattern, b.longitude.bitPattern, b.latitude.bitPattern])
                a = b
            }
        }
        return keys
    }

    @Test("a ring inside one cell is one chain: its n edges are n + 1 vertices")
    func oneCellOneChain() {
        let square = Region(.polygons([Polygon(rings: [TestShapes.rectangle(0, 0, 1, 1)])]))
        let index = RegionIndex(regions: [square], forcedCellSide: 10)
        let stats = index.statistics
        #expect(stats.entries == 1)
        #expect(stats.edgeCopies == 4)
        #expect(stats.edgeChains == 1)
        // Header and five vertices (the reference point is the cell's centre, not stored).
        #expect(index.records.count == 6)
        let entries = Self.parityEntries(index)
        #expect(entries.count == 1 && entries[0].entry.chains.map(\.count) == [5])
        #expect(index.regions(containing: Coordinate(latitude: 0.5, longitude: 0.5)) == [0])
        #expect(index.regions(containing: Coordinate(latitude: 0, longitude: 1)) == [0])  // a corner: a chain's inner vertex
        #expect(index.regions(containing: Coordinate(latitude: 1.5, longitude: 0.5)).isEmpty)
    }

    /// A comb: its teeth enter and leave the cells between them, so an entry holds several chains.
    static func comb(teeth: Int, width: Double, height: Double) -> [Coordinate] {
        var ring = [Coordinate(latitude: 0, longitude: 0)]
        let step = width / Double(teeth)
        for t in 0 ..< teeth {
            let x = Double(t) * step
            ring.append(Coordinate(latitude: height, longitude: x))
            ring.append(Coordinate(latitude: height, longitude: x + step / 2))
            ring.append(Coordinate(latitude: -0.01, longitude: x + step / 2))
            ring.append(Coordinate(latitude: -0.01, longitude: x + step))
        }
        ring.append(Coordinate(latitude: -0.3, longitude: width))
        ring.append(Coordinate(latitude: -0.3, longitude: 0))
        return ring
    }

    @Test("every stored edge is a polygon edge, stored once per cell it meets; chains break where the ring leaves",
          arguments: [0.013, 0.05, 0.2])
    func chainsHoldExactlyTheCellsEdges(side: Double) {
        var rng = SplitMix64(seed: UInt64(side * 1e4))
        let comb = Self.comb(teeth: 12, width: 1, height: 0.4)
        let star = TestShapes.starRing(0.5, 0.1, radius: 0.45, vertices: 90, snapped: true, using: &rng)
        let regions = [Region(.polygons([Polygon(rings: [comb])])), Region(.polygons([Polygon(rings: [star])]))]
        let index = RegionIndex(regions: regions, forcedCellSide: side)
        let keys = [Self.edgeKeys([comb]), Self.edgeKeys([star])]
        var breaks = 0
        for (cell, entry) in Self.parityEntries(index) {
            breaks += entry.chains.count - 1
            #expect(entry.chains.allSatisfy { $0.count >= 2 }, "cell \(cell): a chain without an edge")
            var seen = Set<[UInt64]>()
            for e in entry.edges {
                let key = [e.ax.bitPattern, e.ay.bitPattern, e.bx.bitPattern, e.by.bitPattern]
                #expect(keys[Int(entry.region)].contains(key), "cell \(cell): \(e) is no edge of region \(entry.region)")
                #expect(seen.insert(key).inserted, "cell \(cell): \(e) stored twice")
            }
            // Two chains of one entry never join: else they would have been one chain.
            for (a, b) in zip(entry.chains, entry.chains.dropFirst()) {
                #expect(a.last!.x.bitPattern != b.first!.x.bitPattern || a.last!.y.bitPattern != b.first!.y.bitPattern)
            }
        }
        #expect(breaks > 0, "the comb's teeth should break some cell's edges into chains")
        let stats = index.statistics
        #expect(stats.edgeChains < stats.edgeCopies)
        // Points where chains start and end: the comb's vertices, its edges' midpoints, points just off them.
        var points: [Coordinate] = []
        for ring in [comb, star] {
            for (a, b) in zip(ring, ring.dropFirst() + [ring[0]]) {
                points.append(a)
                let mid = Coordinate(latitude: (a.latitude + b.latitude) / 2, longitude: (a.longitude + b.longitude) / 2)
                points.append(mid)
                for d in [-1e-12, 1e-12] {
                    points.append(Coordinate(latitude: mid.latitude + d, longitude: mid.longitude))
                    points.append(Coordinate(latitude: a.latitude, longitude: a.longitude + d))
                }
            }
        }
        for _ in 0 ..< 2000 {
            points.append(Coordinate(latitude: Double.random(in: -0.4...0.6, using: &rng),
                                     longitude: Double.random(in: -0.1...1.1, using: &rng)))
        }
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }
}
