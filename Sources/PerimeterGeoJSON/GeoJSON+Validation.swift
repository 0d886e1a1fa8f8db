extension GeoJSON {
    /// A rule broken by a geometry, found by ``GeoJSON/Validation`` (shared by ``GeoJSONReader`` and `Codable`).
    struct Issue: Sendable {
        /// What is wrong.
        enum Kind: Sendable, Equatable {
            case shortPosition(count: Int)
            case extraPositionNumbers(count: Int)
            case nonFinite
            case latitudeOutOfRange(Double)
            case longitudeOutOfRange(Double)
            case longitudeBeyond180(Double)
            case lineTooShort(count: Int)
            case ringTooShort(count: Int)
            case ringNotClosed
            case badBoundingBox

            /// Errors make the geometry unusable; warnings leave it as written.
            var severity: GeoJSONProblem.Severity {
                switch self {
                case .extraPositionNumbers, .longitudeBeyond180: .warning
                default: .error
                }
            }

            /// The human message.
            var message: String {
                switch self {
                case .shortPosition(let count):
                    "a position needs at least 2 numbers (longitude, latitude), found \(count)"
                case .extraPositionNumbers(let count):
                    "position has \(count) numbers; only longitude, latitude and altitude are kept"
                case .nonFinite:
                    "coordinate is not a finite number"
                case .latitudeOutOfRange(let value):
                    "latitude \(value) is outside -90...90"
                case .longitudeOutOfRange(let value):
                    "longitude \(value) is outside -540...540"
                case .longitudeBeyond180(let value):
                    "longitude \(value) is outside -180...180 (RFC 7946); kept as written"
                case .lineTooShort(let count):
                    "a LineString needs at least 2 positions, found \(count)"
                case .ringTooShort(let count):
                    "a linear ring needs at least 4 positions, found \(count)"
                case .ringNotClosed:
                    "linear ring is not closed: its last position differs from its first"
                case .badBoundingBox:
                    "bbox must be an array of 4 or 6 numbers"
                }
            }
        }

        /// What is wrong.
        var kind: Kind
        /// Where, relative to the geometry object (e.g. `coordinates[0][3][1]`).
        var path: [JSONPath.Component]
    }

    /// Semantic checks of decoded geometries: coordinate ranges, line and ring sizes, ring closure.
    ///
    /// Longitudes beyond ±180 are a warning up to ±540 (data that wraps once, e.g. around the antimeridian) and an
    /// error beyond; latitudes beyond ±90 and non-finite numbers are errors.
    enum Validation {
        /// Appends the issues of `geometry` to `issues`.
        /// - Parameter positionsInRange: the caller knows that every position has longitude and latitude
        ///   within ±180 and ±90 and no altitude (the reader checks that as it reads), so that positions
        ///   cannot have issues and only the sizes and closure of lines and rings are checked.
        /// - Complexity: O(number of positions); allocates only when there is an issue.
        static func check(_ geometry: Geometry, into issues: inout [Issue], positionsInRange: Bool = false) {
            let c: JSONPath.Component = .key("coordinates")
            let each = !positionsInRange
            switch geometry {
            case .point(let g):
                if each { check(g.coordinates, [c], into: &issues) }
            case .multiPoint(let g):
                if each { for (i, p) in g.coordinates.enumerated() { check(p, [c, .index(i)], into: &issues) } }
            case .lineString(let g):
                checkLine(g.coordinates, [c], allowEmpty: true, positions: each, into: &issues)
            case .multiLineString(let g):
                for (i, line) in g.coordinates.enumerated() {
                    checkLine(line, [c, .index(i)], allowEmpty: false, positions: each, into: &issues)
                }
            case .polygon(let g):
                checkRings(g.coordinates, [c], positions: each, into: &issues)
            case .multiPolygon(let g):
                for (i, rings) in g.coordinates.enumerated() {
                    checkRings(rings, [c, .index(i)], positions: each, into: &issues)
                }
            case .geometryCollection(let g):
                for (i, member) in g.geometries.enumerated() {
                    var inner: [Issue] = []
                    check(member, into: &inner)
                    for var issue in inner {
                        issue.path.insert(contentsOf: [.key("geometries"), .index(i)], at: 0)
                        issues.append(issue)
                    }
                }
            }
        }

        /// The first error of `geometry` as a message with its relative path, or `nil` when it has none.
        static func firstError(of geometry: Geometry) -> String? {
            var issues: [Issue] = []
            check(geometry, into: &issues)
            guard let issue = issues.first(where: { $0.kind.severity == .error }) else { return nil }
            return "\(issue.kind.message) at \(JSONPath(issue.path))"
        }

        @inline(__always)
        static func check(_ p: Position, _ path: @autoclosure () -> [JSONPath.Component], into issues: inout [Issue]) {
            let lon = p.longitude, lat = p.latitude
            // Fast path: the overwhelmingly common valid position.
            if abs(lon) <= 180, abs(lat) <= 90, p.altitude?.isFinite ?? true { return }
            if !lon.isFinite {
                issues.append(Issue(kind: .nonFinite, path: path() + [.index(0)]))
            } else if abs(lon) > 540 {
                issues.append(Issue(kind: .longitudeOutOfRange(lon), path: path() + [.index(0)]))
            } else if abs(lon) > 180 {
                issues.append(Issue(kind: .longitudeBeyond180(lon), path: path() + [.index(0)]))
            }
            if !lat.isFinite {
                issues.append(Issue(kind: .nonFinite, path: path() + [.index(1)]))
            } else if abs(lat) > 90 {
                issues.append(Issue(kind: .latitudeOutOfRange(lat), path: path() + [.index(1)]))
            }
            if let altitude = p.altitude, !altitude.isFinite {
                issues.append(Issue(kind: .nonFinite, path: path() + [.index(2)]))
            }
        }

        static func checkLine(_ line: [Position], _ path: [JSONPath.Component], allowEmpty: Bool, positions: Bool = true,
                              into issues: inout [Issue]) {
            if line.count < 2, !(allowEmpty && line.isEmpty) {
                issues.append(Issue(kind: .lineTooShort(count: line.count), path: path))
            }
            if positions { for (i, p) in line.enumerated() { check(p, path + [.index(i)], into: &issues) } }
        }

        static func checkRings(_ rings: [[Position]], _ path: [JSONPath.Component], positions: Bool = true,
                               into issues: inout [Issue]) {
            for (r, ring) in rings.enumerated() {
                if ring.count < 4 {
                    issues.append(Issue(kind: .ringTooShort(count: ring.count), path: path + [.index(r)]))
                } else if ring.first != ring.last {
                    issues.append(Issue(kind: .ringNotClosed, path: path + [.index(r), .index(ring.count - 1)]))
                }
                if positions { for (i, p) in ring.enumerated() { check(p, path + [.index(r), .index(i)], into: &issues) } }
            }
        }
    }
}
