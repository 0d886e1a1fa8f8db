import Foundation
import PerimeterEngine
import PerimeterGeometry

/// Reads GPX 1.0 and 1.1.
///
/// Uses track points (`trkpt`) when the file has any, else route points (`rtept`), else waypoints
/// (`wpt`). Per point: `lat`/`lon` attributes, `<time>`, `<speed>` (m/s), `<course>` (degrees), and a
/// horizontal accuracy in metres only from an element named `accuracy`, `hacc` or `horizontalAccuracy`
/// (any namespace, e.g. inside `<extensions>`); `<hdop>` is unitless and is not mapped. `speed` and
/// `course` are also taken from extensions (e.g. Garmin's `gpxtpx:speed`).
///
/// Timing: when none of the chosen points has a `<time>`, the points are simulated with the reader's
/// ``TrackSimulation`` or the read fails; when only some lack one, those are skipped with a warning.
enum GPXReader {
    private enum Kind: Int { case track, route, waypoint
        var tag: String { ["trkpt", "rtept", "wpt"][rawValue] }
    }
    private enum Field { case time, speed, course, accuracy }

    private struct Point {
        var coordinate: Coordinate
        var time: Date?
        var line: Int
        var speed: Double?
        var course: Double?
        var accuracy: Double?
    }

    private struct Bucket {
        var elements = 0
        var points: [Point] = []
        var log: ProblemLog
    }

    private struct Open {
        var kind: Kind
        var depth: Int
        var line: Int
        var column: Int
        var lat: String?
        var lon: String?
        var time: String?
        var speed: String?
        var course: String?
        var accuracy: String?
    }

    static func read(_ bytes: [UInt8], context: ReadContext) throws -> TrackReadResult {
        var scanner = XMLScanner(bytes: bytes, source: context.source)
        var buckets = [Bucket](repeating: Bucket(log: ProblemLog(source: context.source)), count: 3)
        var current: Open?
        var capture: (field: Field, depth: Int)?
        var text = ""
        var rootChecked = false

        while let event = try scanner.next() {
            switch event {
            case let .start(name, attributes, selfClosing, offset):
                if !rootChecked {
                    rootChecked = true
                    guard name == "gpx" else { throw scanner.problem(at: offset, "the root element is <\(name)>, not <gpx>: not a GPX file") }
                    continue
                }
                if current == nil {
                    let kind: Kind? = name == "trkpt" ? .track : name == "rtept" ? .route : name == "wpt" ? .waypoint : nil
                    guard let kind else { continue }
                    let position = scanner.position(of: offset)
                    var open = Open(kind: kind, depth: scanner.depth, line: position.line, column: position.column)
                    for attribute in attributes {
                        if attribute.name == "lat" { open.lat = attribute.value } else if attribute.name == "lon" { open.lon = attribute.value }
                    }
                    if selfClosing { finish(open, into: &buckets[kind.rawValue]) } else { current = open }
                } else if capture == nil, !selfClosing {
                    let field: Field?
                    switch name.count <= 18 ? name.lowercased() : "" {
                    case "time": field = .time
                    case "speed": field = .speed
                    case "course": field = .course
                    case "accuracy", "hacc", "horizontalaccuracy": field = .accuracy
                    default: field = nil
                    }
                    if let field { capture = (field, scanner.depth); text = "" }
                }
            case .text(let range):
                if capture != nil { text += try scanner.decode(range) }
            case .cdata(let range):
                if capture != nil { text += String(decoding: bytes[range], as: UTF8.self) }
            case .end:
                if let c = capture, scanner.depth < c.depth {
                    let value = trimmed(text)
                    switch c.field {
                    case .time: if current?.time == nil { current?.time = value }
                    case .speed: if current?.speed == nil { current?.speed = value }
                    case .course: if current?.course == nil { current?.course = value }
                    case .accuracy: if current?.accuracy == nil { current?.accuracy = value }
                    }
                    capture = nil
                }
                if let open = current, scanner.depth < open.depth {
                    finish(open, into: &buckets[open.kind.rawValue])
                    current = nil
                }
            }
        }

        guard let kind = [Kind.track, .route, .waypoint].first(where: { buckets[$0.rawValue].elements > 0 }) else {
            throw TrackProblem(source: context.source, message: "the GPX file has no <trkpt>, <rtept> or <wpt> points")
        }
        var bucket = buckets[kind.rawValue]
        let timed = bucket.points.contains { $0.time != nil }
        var updates = [LocationUpdate]()
        if timed {
            updates.reserveCapacity(bucket.points.count)
            for point in bucket.points {
                guard let time = point.time else {
                    bucket.log.add(line: point.line, "<\(kind.tag)> has no <time> while other points have one; point skipped")
                    continue
                }
                updates.append(LocationUpdate(device: context.defaultDevice, time: time, coordinate: point.coordinate,
                                              horizontalAccuracy: point.accuracy, speed: point.speed, course: point.course))
            }
        } else if !bucket.points.isEmpty {
            guard let simulation = context.simulation else {
                throw TrackProblem(source: context.source, line: bucket.points[0].line, message:
                    "the <\(kind.tag)> points have no <time>; give a simulation speed to simulate their timing")
            }
            updates = try simulation.simulate(path: bucket.points.map(\.coordinate), device: context.defaultDevice, source: context.source)
        }
        return TrackReadResult(updates: updates, warnings: bucket.log.finished())
    }

    /// `text` without leading and trailing XML white space.
    private static func trimmed(_ text: String) -> String {
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last, XMLScanner.isSpace(first) || XMLScanner.isSpace(last) else { return text }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Validates a finished point and files it (or its problem) in its bucket.
    private static func finish(_ open: Open, into bucket: inout Bucket) {
        bucket.elements += 1
        let tag = open.kind.tag
        func coordinate(_ raw: String?, _ name: String, _ limit: Double) -> Double? {
            guard let raw else {
                bucket.log.add(line: open.line, column: open.column, "<\(tag)> has no \(name) attribute; point skipped")
                return nil
            }
            guard let value = TrackNumber.parse(raw) else {
                bucket.log.add(line: open.line, column: open.column, "<\(tag)> has \(name)=\"\(raw)\", not a number; point skipped")
                return nil
            }
            guard abs(value) <= limit else {
                bucket.log.add(line: open.line, column: open.column, "<\(tag)> has \(name)=\"\(raw)\", outside -\(Int(limit))…\(Int(limit)); point skipped")
                return nil
            }
            return value
        }
        guard let lat = coordinate(open.lat, "lat", 90), let lon = coordinate(open.lon, "lon", 180) else { return }
        var time: Date?
        if let raw = open.time, !raw.isEmpty {
            guard let parsed = TrackTime.iso8601(raw) else {
                bucket.log.add(line: open.line, column: open.column, "<time>\(raw)</time> of <\(tag)> is not an ISO 8601 time; point skipped")
                return
            }
            time = parsed
        }
        func quantity(_ raw: String?, _ name: String) -> Double? {
            guard let raw, !raw.isEmpty else { return nil }
            guard let value = TrackNumber.parse(raw) else {
                bucket.log.add(line: open.line, column: open.column, "<\(name)>\(raw)</\(name)> of <\(tag)> is not a number; \(name) ignored")
                return nil
            }
            return value < 0 ? nil : value
        }
        let speed = quantity(open.speed, "speed")
        let course = quantity(open.course, "course").map { $0.truncatingRemainder(dividingBy: 360) }
        let accuracy = quantity(open.accuracy, "accuracy")
        bucket.points.append(Point(coordinate: Coordinate(latitude: lat, longitude: lon), time: time, line: open.line,
                                   speed: speed, course: course, accuracy: accuracy))
    }
}
