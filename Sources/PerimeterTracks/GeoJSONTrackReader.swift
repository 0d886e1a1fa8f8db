import Foundation
import PerimeterEngine
import PerimeterGeometry

/// Reads a GeoJSON document whose LineStrings (and Points) are a track.
///
/// Accepts a FeatureCollection, a Feature, a GeometryCollection or a bare geometry. LineString,
/// MultiLineString, Point and MultiPoint give one update per vertex. Vertex times come from
/// `properties.coordTimes` or `properties.times` (ISO strings or epoch numbers; for a MultiLineString one
/// array per line or one flat array), else from a 4th coordinate (epoch), else — for a Point — from a
/// `time`-like property. Without times the vertices are simulated (``TrackSimulation``), or the read fails.
///
/// JSONSerialization gives no line numbers, so problems name the JSON path (`features[3].geometry`).
enum GeoJSONTrackReader {
    /// `type` values that make a JSON object a GeoJSON document this reader understands.
    static let documentTypes: Set<String> = ["FeatureCollection", "Feature", "GeometryCollection",
                                             "LineString", "MultiLineString", "Point", "MultiPoint"]

    /// One line-like geometry with what is known of its timing.
    private struct Piece {
        var path: String
        var device: DeviceID
        var vertices: [(coordinate: Coordinate, time: Date?)] = []
        var timed = false
    }

    static func read(_ bytes: [UInt8], context: ReadContext) throws -> TrackReadResult {
        var log = ProblemLog(source: context.source)
        let body = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Data(bytes[3...]) : Data(bytes)
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: body)
        } catch {
            throw TrackProblem(source: context.source, message: "not valid JSON: \(JSONText.describe(error))")
        }
        guard let object = root as? [String: Any], let type = object["type"] as? String else {
            throw TrackProblem(source: context.source, message: "not GeoJSON: the top level is not an object with a \"type\"")
        }
        guard documentTypes.contains(type) || ["Polygon", "MultiPolygon"].contains(type) else {
            throw TrackProblem(source: context.source, message: "not GeoJSON: unknown type \"\(type)\"")
        }
        var pieces = [Piece]()
        switch type {
        case "FeatureCollection":
            guard let features = object["features"] as? [Any] else {
                throw TrackProblem(source: context.source, message: "FeatureCollection has no \"features\" array")
            }
            for (index, feature) in features.enumerated() {
                collectFeature(feature, path: "features[\(index)]", context: context, into: &pieces, log: &log)
            }
        case "Feature":
            collectFeature(object, path: "feature", context: context, into: &pieces, log: &log)
        default:
            collectGeometry(object, properties: [:], path: "geometry", device: context.defaultDevice, into: &pieces, log: &log)
        }
        if pieces.isEmpty {
            throw TrackProblem(source: context.source, message: "no LineString, MultiLineString, Point or MultiPoint geometry with usable vertices")
        }
        var updates = [LocationUpdate]()
        let anyTimed = pieces.contains { $0.timed }
        var untimedPath = [Coordinate]()
        var untimedDevice: DeviceID?
        for piece in pieces {
            if piece.timed {
                for vertex in piece.vertices {
                    guard let time = vertex.time else { continue }
                    updates.append(LocationUpdate(device: piece.device, time: time, coordinate: vertex.coordinate))
                }
            } else if context.simulation != nil {
                untimedPath.append(contentsOf: piece.vertices.map(\.coordinate))
                untimedDevice = untimedDevice ?? piece.device
            } else if anyTimed {
                log.add(line: nil, "\(piece.path) has no times (no properties.coordTimes/times, no 4th coordinate); skipped")
            }
        }
        if !anyTimed, context.simulation == nil {
            throw TrackProblem(source: context.source, message:
                "the track has no times (no properties.coordTimes or times, no 4th coordinate); give a simulation speed to simulate its timing")
        }
        if let simulation = context.simulation, let device = untimedDevice {
            updates.append(contentsOf: try simulation.simulate(path: untimedPath, device: device, source: context.source))
        }
        return TrackReadResult(updates: updates, warnings: log.finished())
    }

    private static func collectFeature(_ any: Any, path: String, context: ReadContext, into pieces: inout [Piece], log: inout ProblemLog) {
        guard let feature = any as? [String: Any] else {
            log.add(line: nil, "\(path) is not an object; skipped")
            return
        }
        let properties = feature["properties"] as? [String: Any] ?? [:]
        var device = context.defaultDevice
        for (key, value) in properties where FieldRole.device.aliases.contains(FieldRole.normalise(key)) {
            if let s = value as? String, !s.isEmpty { device = DeviceID(s); break }
            if let n = value as? NSNumber { device = DeviceID(n.stringValue); break }
        }
        guard let geometry = feature["geometry"] as? [String: Any] else {
            log.add(line: nil, "\(path) has no geometry; skipped")
            return
        }
        collectGeometry(geometry, properties: properties, path: path + ".geometry", device: device, into: &pieces, log: &log)
    }

    private static func collectGeometry(_ geometry: [String: Any], properties: [String: Any], path: String, device: DeviceID,
                                        into pieces: inout [Piece], log: inout ProblemLog) {
        let type = geometry["type"] as? String ?? "(no type)"
        let lines: [Any]
        switch type {
        case "GeometryCollection":
            for (index, member) in (geometry["geometries"] as? [Any] ?? []).enumerated() {
                if let member = member as? [String: Any] {
                    collectGeometry(member, properties: properties, path: path + ".geometries[\(index)]", device: device, into: &pieces, log: &log)
                }
            }
            return
        case "LineString", "MultiPoint": lines = [geometry["coordinates"] ?? NSNull()]
        case "MultiLineString": lines = geometry["coordinates"] as? [Any] ?? [NSNull()]
        case "Point": lines = [[geometry["coordinates"] ?? NSNull()]]
        default:
            log.add(line: nil, "\(path) is a \(type), not a line or point; skipped")
            return
        }
        // Times: coordTimes / times (flat or one array per line), else 4th coordinate, else a Point's time property.
        var timeArrays: [[Any]]? = nil
        for (key, value) in properties where ["coordtimes", "times"].contains(FieldRole.normalise(key)) {
            guard let array = value as? [Any] else { continue }
            if let nested = array as? [[Any]], array.count == lines.count, type == "MultiLineString" {
                timeArrays = nested
            } else {
                timeArrays = [array]
            }
            break
        }
        var piece = Piece(path: path, device: device)
        var flat = [(coordinate: Coordinate, extra: Any?, line: Int, index: Int)]()
        for (lineIndex, line) in lines.enumerated() {
            guard let vertices = line as? [Any] else {
                log.add(line: nil, "\(path).coordinates\(lines.count > 1 ? "[\(lineIndex)]" : "") is not an array of positions; skipped")
                continue
            }
            for (index, vertex) in vertices.enumerated() {
                let vertexPath = "\(path).coordinates\(lines.count > 1 ? "[\(lineIndex)]" : "")[\(index)]"
                guard let numbers = vertex as? [Any], numbers.count >= 2,
                      let lon = JSONText.value(numbers[0])?.number, let lat = JSONText.value(numbers[1])?.number else {
                    log.add(line: nil, "\(vertexPath) is not a position [lon, lat]; vertex skipped")
                    continue
                }
                guard abs(lat) <= 90, abs(lon) <= 180 else {
                    log.add(line: nil, "\(vertexPath) has latitude \(lat), longitude \(lon): outside -90…90 / -180…180; vertex skipped")
                    continue
                }
                flat.append((Coordinate(latitude: lat, longitude: lon), numbers.count >= 4 ? numbers[3] : nil, lineIndex, index))
            }
        }
        if flat.isEmpty { return }
        var times: [Any]? = nil
        if let timeArrays {
            if timeArrays.count == lines.count, timeArrays.count > 1 {
                // One array per line: index by (line, vertex).
                times = flat.map { v in v.index < timeArrays[v.line].count ? timeArrays[v.line][v.index] : NSNull() }
            } else if let only = timeArrays.first, only.count == flat.count {
                times = only
            } else {
                log.add(line: nil, "\(path) has \(flat.count) vertices but \(timeArrays.first?.count ?? 0) times in properties.coordTimes/times; skipped")
                return
            }
        } else if flat.allSatisfy({ $0.extra != nil }) {
            times = flat.map { $0.extra as Any }
        } else if type == "Point" {
            for (key, value) in properties where FieldRole.time.aliases.contains(FieldRole.normalise(key)) {
                times = [value]
                break
            }
        }
        if let times {
            piece.timed = true
            for (k, vertex) in flat.enumerated() {
                let value = JSONText.value(times[k])
                guard let time = value?.date else {
                    log.add(line: nil, "\(path) vertex \(k): time \(value?.quoted ?? "null") is neither ISO 8601 nor an epoch number; vertex skipped")
                    continue
                }
                piece.vertices.append((vertex.coordinate, time))
            }
        } else {
            piece.vertices = flat.map { ($0.coordinate, nil) }
        }
        pieces.append(piece)
    }
}
