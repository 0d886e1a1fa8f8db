import Foundation
import PerimeterGeoJSON
import PerimeterGeometry

/// Writes a workload in the exchange formats of `../shared/bench` (so refgrid, the Shapely and PostGIS
/// drivers read the very same numbers), and reads the Python generator's output back.
///
/// Files: `fences.geojson`, `fences_wkt.tsv` (`id<TAB>kind<TAB>nverts<TAB>WKT`), `fences.bin` (the
/// `GFNC` layout of export_bin.py), `circles.csv` (`id,lon,lat,radius_m`), `points.bin` (32-byte
/// little-endian records `<u32 device><u32 seq><f64 ts><f64 lon><f64 lat>`).
public enum WorkloadFiles {
    /// A problem reading a workload folder.
    public struct ReadError: Error, CustomStringConvertible {
        /// What went wrong, naming the file.
        public var description: String
    }

    // MARK: - Writing

    /// Writes every exchange file of `workload` into `directory` (created if needed).
    public static func write(_ workload: Workload, to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(geoJSON(workload.fences)).write(to: directory.appendingPathComponent("fences.geojson"))
        try Data(wktTable(workload.fences)).write(to: directory.appendingPathComponent("fences_wkt.tsv"))
        try Data(fenceBinary(workload.fences)).write(to: directory.appendingPathComponent("fences.bin"))
        try Data(pointBinary(workload.fixes)).write(to: directory.appendingPathComponent("points.bin"))
        var csv = "id,lon,lat,radius_m\n"
        for (i, c) in workload.circles.enumerated() {
            csv += "\(i),\(c.center.longitude),\(c.center.latitude),\(c.radius)\n"
        }
        try Data(csv.utf8).write(to: directory.appendingPathComponent("circles.csv"))
    }

    /// The polygon fences as a FeatureCollection, one feature per line (ids are fence numbers).
    public static func geoJSON(_ fences: [Workload.PolygonFence], repeat times: Int = 1) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fences.reduce(0) { $0 + $1.vertexCount } * 24 * times + 64)
        out.append(contentsOf: #"{"type":"FeatureCollection","features":["#.utf8)
        var id = 0
        for _ in 0..<max(1, times) {
            for fence in fences {
                if id > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "\n"))
                out.append(contentsOf: #"{"type":"Feature","id":\#(id),"properties":{"id":\#(id),"kind":"\#(fence.kind.rawValue)","nverts":\#(fence.vertexCount)},"geometry":{"type":"#.utf8)
                let multi = fence.polygons.count > 1
                out.append(contentsOf: (multi ? #""MultiPolygon","coordinates":"# : #""Polygon","coordinates":"#).utf8)
                if multi { out.append(UInt8(ascii: "[")) }
                for (p, polygon) in fence.polygons.enumerated() {
                    if p > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(UInt8(ascii: "["))
                    for (r, ring) in polygon.enumerated() {
                        if r > 0 { out.append(UInt8(ascii: ",")) }
                        out.append(UInt8(ascii: "["))
                        for (k, c) in ring.enumerated() {
                            if k > 0 { out.append(UInt8(ascii: ",")) }
                            out.append(UInt8(ascii: "["))
                            out.append(contentsOf: c.longitude.description.utf8)
                            out.append(UInt8(ascii: ","))
                            out.append(contentsOf: c.latitude.description.utf8)
                            out.append(UInt8(ascii: "]"))
                        }
                        out.append(UInt8(ascii: "]"))
                    }
                    out.append(UInt8(ascii: "]"))
                }
                if multi { out.append(UInt8(ascii: "]")) }
                out.append(contentsOf: "}}".utf8)
                id += 1
            }
        }
        out.append(contentsOf: "\n]}\n".utf8)
        return out
    }

    /// `id<TAB>kind<TAB>nverts<TAB>WKT` lines.
    static func wktTable(_ fences: [Workload.PolygonFence]) -> [UInt8] {
        var out: [UInt8] = []
        for (id, fence) in fences.enumerated() {
            out.append(contentsOf: "\(id)\t\(fence.kind.rawValue)\t\(fence.vertexCount)\t".utf8)
            let multi = fence.polygons.count > 1
            out.append(contentsOf: (multi ? "MULTIPOLYGON(" : "POLYGON").utf8)
            for (p, polygon) in fence.polygons.enumerated() {
                if p > 0 { out.append(UInt8(ascii: ",")) }
                out.append(UInt8(ascii: "("))
                for (r, ring) in polygon.enumerated() {
                    if r > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(UInt8(ascii: "("))
                    for (k, c) in ring.enumerated() {
                        if k > 0 { out.append(UInt8(ascii: ",")) }
                        out.append(contentsOf: c.longitude.description.utf8)
                        out.append(UInt8(ascii: " "))
                        out.append(contentsOf: c.latitude.description.utf8)
                    }
                    out.append(UInt8(ascii: ")"))
                }
                out.append(UInt8(ascii: ")"))
            }
            if multi { out.append(UInt8(ascii: ")")) }
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// The `GFNC` flat layout read by refgrid.c.
    static func fenceBinary(_ fences: [Workload.PolygonFence]) -> [UInt8] {
        var head: [UInt8] = Array("GFNC".utf8)
        var fenceTable: [UInt8] = [], ringTable: [UInt8] = [], vertices: [UInt8] = []
        var ringCount: UInt32 = 0, vertexCount: UInt32 = 0
        for (id, fence) in fences.enumerated() {
            let start = ringCount
            for polygon in fence.polygons {
                for ring in polygon {
                    append32(UInt32(vertexCount), &ringTable); append32(UInt32(ring.count), &ringTable)
                    ringCount += 1
                    for c in ring {
                        append64(c.longitude.bitPattern, &vertices); append64(c.latitude.bitPattern, &vertices)
                        vertexCount += 1
                    }
                }
            }
            append32(UInt32(id), &fenceTable); append32(start, &fenceTable); append32(ringCount - start, &fenceTable)
        }
        append32(UInt32(fences.count), &head); append32(ringCount, &head); append32(vertexCount, &head)
        return head + fenceTable + ringTable + vertices
    }

    /// 32-byte records `<u32 device><u32 seq><f64 ts><f64 lon><f64 lat>`.
    static func pointBinary(_ fixes: Workload.Fixes) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(fixes.count * 32)
        for i in 0..<fixes.count {
            append32(fixes.device[i], &out); append32(UInt32(truncatingIfNeeded: i), &out)
            append64(fixes.time[i].bitPattern, &out); append64(fixes.longitude[i].bitPattern, &out)
            append64(fixes.latitude[i].bitPattern, &out)
        }
        return out
    }

    private static func append32(_ v: UInt32, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func append64(_ v: UInt64, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }

    // MARK: - Reading (gen_workload.py output)

    /// Reads `fences.geojson`, `circles.csv` (optional) and `points.bin` from a gen_workload.py output folder.
    public static func read(from directory: URL) throws -> Workload {
        let fenceURL = directory.appendingPathComponent("fences.geojson")
        guard let fenceData = FileManager.default.contents(atPath: fenceURL.path) else {
            throw ReadError(description: "\(fenceURL.path): cannot read")
        }
        let result = GeoJSONReader().read(Array(fenceData))
        guard let object = result.object else {
            throw ReadError(description: "\(fenceURL.path): \(result.problems.first.map { "\($0)" } ?? "not GeoJSON")")
        }
        var fences: [Workload.PolygonFence] = []
        for (i, feature) in object.features.enumerated() {
            let kind = feature.properties["kind"]?.stringValue.flatMap(Workload.PolygonFence.Kind.init(rawValue:)) ?? .small
            func rings(_ r: [[GeoJSON.Position]]) -> [[Coordinate]] {
                r.map { $0.map { Coordinate(latitude: $0.latitude, longitude: $0.longitude) } }
            }
            switch feature.geometry {
            case .polygon(let p)?: fences.append(.init(kind: kind, polygons: [rings(p.coordinates)]))
            case .multiPolygon(let m)?: fences.append(.init(kind: kind, polygons: m.coordinates.map(rings)))
            default: throw ReadError(description: "\(fenceURL.path): feature \(i) is not a Polygon or MultiPolygon")
            }
        }
        var circles: [Workload.CircleFence] = []
        let circleURL = directory.appendingPathComponent("circles.csv")
        if let text = try? String(contentsOf: circleURL, encoding: .utf8) {
            for (n, line) in text.split(separator: "\n").enumerated().dropFirst() {
                let f = line.split(separator: ",")
                guard f.count >= 4, let lon = Double(f[1]), let lat = Double(f[2]), let r = Double(f[3]) else {
                    throw ReadError(description: "\(circleURL.path):\(n + 1): expected id,lon,lat,radius_m")
                }
                circles.append(.init(center: Coordinate(latitude: lat, longitude: lon), radius: r))
            }
        }
        let pointURL = directory.appendingPathComponent("points.bin")
        guard let points = FileManager.default.contents(atPath: pointURL.path) else {
            throw ReadError(description: "\(pointURL.path): cannot read")
        }
        guard points.count % 32 == 0 else {
            throw ReadError(description: "\(pointURL.path): size \(points.count) is not a multiple of 32-byte records")
        }
        var fixes = Workload.Fixes()
        let n = points.count / 32
        fixes.device.reserveCapacity(n); fixes.time.reserveCapacity(n)
        fixes.longitude.reserveCapacity(n); fixes.latitude.reserveCapacity(n)
        points.withUnsafeBytes { raw in
            for i in 0..<n {
                let base = i * 32
                fixes.device.append(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: base, as: UInt32.self)))
                fixes.time.append(Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 8, as: UInt64.self))))
                fixes.longitude.append(Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 16, as: UInt64.self))))
                fixes.latitude.append(Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: base + 24, as: UInt64.self))))
            }
        }
        return Workload(origin: "read from \(directory.path)", fences: fences, circles: circles, fixes: fixes)
    }
}
