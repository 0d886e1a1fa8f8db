import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterGeometry

/// Reads a GeoJSON document whose LineStrings (and Points) are a track.
///
/// Accepts a FeatureCollection, a Feature, a GeometryCollection or a bare geometry. LineString,
/// MultiLineString, Point and MultiPoint give one update per vertex. Vertex times come from
/// `properties.coordTimes` or `properties.times` (ISO strings or epoch numbers; for a MultiLineString one
/// array per line or one flat array), else from a 4th coordinate (epoch), else — for a Point — from a
/// `time`-like property. Without times the vertices are simulated (``TrackSimulation``), or the read fails.
///
/// The document is parsed by ``JSONParser``: syntax errors name their line and column. Problems with the
/// structure name the JSON path (`features[3].geometry`) and, found in one extra pass over the text by
/// ``JSONLocator``, the line and column of the value concerned.
enum GeoJSONTrackReader {
    /// `type` values that make a JSON object a GeoJSON document this reader understands.
    static let documentTypes: Set<String> = ["FeatureCollection", "Feature", "GeometryCollection",
                                             "LineString", "MultiLineString", "Point", "MultiPoint"]

    /// One line-like geometry with what is known of its timing.
    private struct Piece {
        var path: String
        var location: [JSONStep]
        var device: DeviceID
        var vertices: [(coordinate: Coordinate, time: Date?)] = []
        var timed = false
    }

    /// A vertex read from the coordinates, with where it is and its 4th coordinate (a possible time).
    private struct Vertex {
        var coordinate: Coordinate
        var extra: JSONValue?
        var location: [JSONStep]
        var line: Int
        var index: Int
    }

    /// Warnings tied to values of the document: their lines and columns are filled in at the end, in one pass.
    private struct Problems {
        var log: ProblemLog
        var places: [(problem: Int, location: [JSONStep])] = []

        /// Records a problem with the value at `location`.
        mutating func add(_ location: [JSONStep], _ message: String) {
            let kept = log.problems.count
            log.add(line: nil, message)
            if log.problems.count > kept { places.append((kept, location)) }
        }

        /// The warnings, placed, in file order.
        func finished(_ bytes: [UInt8]) -> [TrackProblem] {
            var log = log
            let offsets = JSONLocator.offsets(of: places.map(\.location), in: bytes)
            let placed = zip(places, offsets).compactMap { place, offset in offset.map { (place.problem, $0) } }
            var locator = LineLocator(bytes)
            for (problem, offset) in placed.sorted(by: { $0.1 < $1.1 }) {
                let position = locator.position(of: offset)
                log.place(problemAt: problem, line: position.line, column: position.column)
            }
            return log.finished()
        }
    }

    static func read(_ bytes: [UInt8], context: ReadContext) throws -> TrackReadResult {
        var problems = Problems(log: ProblemLog(source: context.source))
        /// A fatal problem at the value at `location` (the whole document when `nil`).
        func fatal(_ location: [JSONStep]?, _ message: String) -> TrackProblem {
            guard let location, let offset = JSONLocator.offsets(of: [location], in: bytes)[0] else {
                return TrackProblem(source: context.source, message: message)
            }
            var locator = LineLocator(bytes)
            let position = locator.position(of: offset)
            return TrackProblem(source: context.source, line: position.line, column: position.column, message: message)
        }
        let root: JSONValue
        do throws(JSONParseError) {
            root = try JSONParser().parse(bytes)
        } catch {
            var locator = LineLocator(bytes)
            let position = locator.position(of: error.offset)
            throw TrackProblem(source: context.source, line: position.line, column: position.column,
                               message: "not valid JSON: \(error.message)")
        }
        guard case .object(let object) = root, let type = object["type"]?.stringValue else {
            throw fatal(root.objectValue?.index(forKey: "type") == nil ? [] : [.key("type")], "not GeoJSON: the top level is not an object with a \"type\"")
        }
        guard documentTypes.contains(type) || ["Polygon", "MultiPolygon"].contains(type) else {
            throw fatal([.key("type")], "not GeoJSON: unknown type \"\(type)\"")
        }
        var pieces = [Piece]()
        switch type {
        case "FeatureCollection":
            guard case .array(let features)? = object["features"] else {
                throw fatal(object.index(forKey: "features") == nil ? [] : [.key("features")], "FeatureCollection has no \"features\" array")
            }
            for (index, feature) in features.enumerated() {
                collectFeature(feature, path: "features[\(index)]", at: [.key("features"), .index(index)], context: context,
                               into: &pieces, problems: &problems)
            }
        case "Feature":
            collectFeature(root, path: "feature", at: [], context: context, into: &pieces, problems: &problems)
        default:
            collectGeometry(object, properties: [:], propertiesAt: [], path: "geometry", at: [], device: context.defaultDevice,
                            into: &pieces, problems: &problems)
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
                problems.add(piece.location, "\(piece.path) has no times (no properties.coordTimes/times, no 4th coordinate); skipped")
            }
        }
        if !anyTimed, context.simulation == nil {
            throw TrackProblem(source: context.source, message:
                "the track has no times (no properties.coordTimes or times, no 4th coordinate); give a simulation speed to simulate its timing")
        }
        if let simulation = context.simulation, let device = untimedDevice {
            updates.append(contentsOf: try simulation.simulate(path: untimedPath, device: device, source: context.source))
        }
        return TrackReadResult(updates: updates, warnings: problems.finished(bytes))
    }

    /// The device a feature's properties name (a non-empty string or a number; the earlier alias wins), if any.
    private static func device(in properties: [String: JSONValue]) -> DeviceID? {
        var keys = FieldKeyTable()
        var best: (rank: Int, device: DeviceID)?
        for (key, value) in properties {
            guard let match = keys.match(key), match.role == .device, match.rank < best?.rank ?? Int.max else { continue }
            switch value {
            case .string(let text) where !text.isEmpty: best = (match.rank, DeviceID(text))
            case .integer(let integer): best = (match.rank, DeviceID(String(integer)))
            case .double(let double):
                best = (match.rank, DeviceID(double == double.rounded() && abs(double) < 1e15 ? String(Int64(double)) : String(double)))
            default: continue
            }
        }
        return best?.device
    }

    private static func collectFeature(_ value: JSONValue, path: String, at location: [JSONStep], context: ReadContext,
                                       into pieces: inout [Piece], problems: inout Problems) {
        guard case .object(let feature) = value else {
            problems.add(location, "\(path) is not an object; skipped")
            return
        }
        let properties = feature["properties"]?.objectValue ?? [:]
        let device = device(in: properties) ?? context.defaultDevice
        guard case .object(let geometry)? = feature["geometry"] else {
            problems.add(feature.index(forKey: "geometry") == nil ? location : location + [.key("geometry")], "\(path) has no geometry; skipped")
            return
        }
        collectGeometry(geometry, properties: properties, propertiesAt: location + [.key("properties")], path: path + ".geometry",
                        at: location + [.key("geometry")], device: device, into: &pieces, problems: &problems)
    }

    private static func collectGeometry(_ geometry: [String: JSONValue], properties: [String: JSONValue], propertiesAt: [JSONStep],
                                        path: String, at location: [JSONStep], device: DeviceID,
                                        into pieces: inout [Piece], problems: inout Problems) {
        let type = geometry["type"]?.stringValue ?? "(no type)"
        let coordinatesAt = location + [.key("coordinates")]
        /// Each line's positions (or whatever stands in their place) and where they are; a Point is one line of one vertex.
        var lines: [(value: JSONValue, location: [JSONStep])]
        switch type {
        case "GeometryCollection":
            for (index, member) in (geometry["geometries"]?.arrayValue ?? []).enumerated() {
                if case .object(let member) = member {
                    collectGeometry(member, properties: properties, propertiesAt: propertiesAt, path: path + ".geometries[\(index)]",
                                    at: location + [.key("geometries"), .index(index)], device: device, into: &pieces, problems: &problems)
                }
            }
            return
        case "LineString", "MultiPoint": lines = [(geometry["coordinates"] ?? .null, coordinatesAt)]
        case "MultiLineString":
            if case .array(let members)? = geometry["coordinates"] {
                lines = members.enumerated().map { ($0.element, coordinatesAt + [.index($0.offset)]) }
            } else {
                lines = [(.null, coordinatesAt)]
            }
        case "Point": lines = [(.array([geometry["coordinates"] ?? .null]), coordinatesAt)]
        default:
            problems.add(location, "\(path) is a \(type), not a line or point; skipped")
            return
        }
        // Times: coordTimes / times (flat or one array per line), else 4th coordinate, else a Point's time property.
        var timeArrays: [(values: [JSONValue], location: [JSONStep])]? = nil
        search: for name in ["coordtimes", "times"] {
            for (key, value) in properties where FieldRole.normalise(key) == name {
                guard case .array(let array) = value else { continue }
                let keyAt = propertiesAt + [.key(key)]
                let nested = array.compactMap(\.arrayValue)
                if nested.count == array.count, array.count == lines.count, type == "MultiLineString" {
                    timeArrays = nested.enumerated().map { ($0.element, keyAt + [.index($0.offset)]) }
                } else {
                    timeArrays = [(array, keyAt)]
                }
                break search
            }
        }
        var piece = Piece(path: path, location: location, device: device)
        var flat = [Vertex]()
        for (lineIndex, line) in lines.enumerated() {
            let linePath = "\(path).coordinates\(lines.count > 1 ? "[\(lineIndex)]" : "")"
            guard case .array(let vertices) = line.value else {
                problems.add(line.location, "\(linePath) is not an array of positions; skipped")
                continue
            }
            for (index, vertex) in vertices.enumerated() {
                let vertexAt = type == "Point" ? line.location : line.location + [.index(index)]
                guard case .array(let numbers) = vertex, numbers.count >= 2,
                      let lon = JSONFields.value(numbers[0])?.number, let lat = JSONFields.value(numbers[1])?.number else {
                    problems.add(vertexAt, "\(linePath)[\(index)] is not a position [lon, lat]; vertex skipped")
                    continue
                }
                guard abs(lat) <= 90, abs(lon) <= 180 else {
                    problems.add(vertexAt, "\(linePath)[\(index)] has latitude \(lat), longitude \(lon): outside -90…90 / -180…180; vertex skipped")
                    continue
                }
                flat.append(Vertex(coordinate: Coordinate(latitude: lat, longitude: lon), extra: numbers.count >= 4 ? .some(numbers[3]) : .none,
                                   location: vertexAt, line: lineIndex, index: index))
            }
        }
        if flat.isEmpty { return }
        var times: [(value: JSONValue, location: [JSONStep])]? = nil
        if let timeArrays {
            if timeArrays.count == lines.count, timeArrays.count > 1 {
                // One array per line: index by (line, vertex).
                times = flat.map { v in
                    let array = timeArrays[v.line]
                    return v.index < array.values.count ? (array.values[v.index], array.location + [.index(v.index)]) : (.null, array.location)
                }
            } else if let only = timeArrays.first, only.values.count == flat.count {
                times = only.values.enumerated().map { ($0.element, only.location + [.index($0.offset)]) }
            } else {
                problems.add(timeArrays.first?.location ?? location,
                             "\(path) has \(flat.count) vertices but \(timeArrays.first?.values.count ?? 0) times in properties.coordTimes/times; skipped")
                return
            }
        } else if flat.allSatisfy({ if case .some = $0.extra { true } else { false } }) {
            times = flat.map { ($0.extra ?? .null, $0.location + [.index(3)]) }
        } else if type == "Point" {
            var best: (rank: Int, key: String, value: JSONValue)?
            var keys = FieldKeyTable()
            for (key, value) in properties {
                guard let match = keys.match(key), match.role == .time, match.rank < best?.rank ?? Int.max else { continue }
                best = (match.rank, key, value)
            }
            if let best { times = [(best.value, propertiesAt + [.key(best.key)])] }
        }
        if let times {
            piece.timed = true
            for (k, vertex) in flat.enumerated() {
                let value = JSONFields.value(times[k].value)
                guard let time = value?.date else {
                    problems.add(times[k].location,
                                 "\(path) vertex \(k): time \(value?.quoted ?? "null") is neither ISO 8601 nor an epoch number; vertex skipped")
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
