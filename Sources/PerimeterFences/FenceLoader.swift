import Foundation
import PerimeterGeoJSON
import PerimeterGeometry

/// Makes fences from GeoJSON features, reporting every problem with the feature and JSON path.
///
/// Geometry becomes a ``Region``:
/// - Polygon, MultiPolygon (and a GeometryCollection of them) → an area;
/// - Point → a circle, MultiPoint → several circles, both needing a radius
///   (``FenceProperties/radius``, ``FenceProperties/mapboxPointRadius`` or ``Options/defaultRadius``);
/// - LineString, MultiLineString → a corridor whose half-width is the radius.
///
/// A feature with an error is skipped; the others still load. See docs/fences.md.
public struct FenceLoader: Sendable {
    /// Loading options.
    public struct Options: Hashable, Sendable {
        /// Mapbox's documented radius for Point features that set none, in metres: what
        /// `GeofencingOptions`, `perimeter replay` and `perimeter validate` use unless told otherwise.
        public static let mapboxDefaultRadius: Double = 300

        /// Radius in metres for Point, MultiPoint and line fences that set none; each fence that gets
        /// it is reported with a warning. `nil`: such a fence is an error.
        public var defaultRadius: Double?
        /// Turn every warning into an error (the fence is then skipped).
        public var strict: Bool

        /// Creates options.
        public init(defaultRadius: Double? = nil, strict: Bool = false) {
            self.defaultRadius = defaultRadius
            self.strict = strict
        }
    }

    /// What loading produced.
    public struct Result: Sendable {
        /// The fences that loaded, in input order.
        public var fences: [Fence]
        /// Every problem found, in input order.
        public var problems: [FenceProblem]
        /// Whether any problem is an error.
        public var hasErrors: Bool { problems.contains { $0.severity == .error } }

        /// Creates a result.
        public init(fences: [Fence], problems: [FenceProblem]) {
            self.fences = fences
            self.problems = problems
        }
    }

    /// The options in use.
    public var options: Options

    /// Creates a loader.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Makes fences from every feature of `object` (a FeatureCollection, a Feature or a bare geometry).
    ///
    /// - Parameter featureIndices: for a FeatureCollection from which a reader left out bad features, the
    ///   input position of each feature (``GeoJSONReadResult/featureIndices``), so problems name the feature
    ///   as the author numbers it. By default features are numbered in order.
    public func load(_ object: GeoJSON.Object, featureIndices: [Int] = []) -> Result {
        switch object {
        case .featureCollection(let collection):
            let base = JSONPath([.key("features")])
            return load(collection.features.enumerated().map { offset, feature in
                let index = offset < featureIndices.count ? featureIndices[offset] : offset
                return (feature, index, base.appending(.index(index)))
            })
        case .feature(let feature):
            return load([(feature, 0, JSONPath())])
        case .geometry(let geometry):
            return load([(GeoJSON.Feature(geometry: geometry), 0, JSONPath())])
        }
    }

    /// Makes fences from what a ``GeoJSONReader`` read (nothing when it read no object).
    public func load(_ read: GeoJSONReadResult) -> Result {
        guard let object = read.object else { return Result(fences: [], problems: []) }
        return load(object, featureIndices: read.featureIndices)
    }

    /// Makes fences from features, each with its position in the input and the JSON path where it was found.
    public func load(_ features: [(feature: GeoJSON.Feature, index: Int, path: JSONPath)]) -> Result {
        var fences: [Fence] = []
        var problems: [FenceProblem] = []
        var seen: [FenceID: Int] = [:]
        for entry in features {
            var context = Context(index: entry.index, feature: entry.feature, path: entry.path, strict: options.strict)
            if let fence = makeFence(&context) {
                if let first = seen[fence.id] {
                    context.error(at: entry.path.appending(.key("id")),
                                  "duplicate fence id \"\(fence.id)\" (first used by feature \(first)); this feature is skipped")
                } else {
                    seen[fence.id] = entry.index
                    if !context.failed { fences.append(fence) }
                }
            }
            problems += context.problems
        }
        return Result(fences: fences, problems: problems)
    }

    // MARK: - One feature

    private struct Context {
        let index: Int
        let feature: GeoJSON.Feature
        let path: JSONPath
        let strict: Bool
        var problems: [FenceProblem] = []
        var failed = false

        var id: String? { feature.id?.description }

        mutating func error(at path: JSONPath, _ message: String) {
            problems.append(FenceProblem(.error, featureIndex: index, featureID: id, path: path, message: message))
            failed = true
        }

        mutating func warning(at path: JSONPath, _ message: String) {
            if strict {
                error(at: path, message + " (an error with --strict)")
            } else {
                problems.append(FenceProblem(.warning, featureIndex: index, featureID: id, path: path, message: message))
            }
        }

        func propertyPath(_ key: String) -> JSONPath {
            path.appending(.key("properties")).appending(.key(key))
        }
    }

    private func makeFence(_ context: inout Context) -> Fence? {
        let feature = context.feature
        let id: FenceID
        if let given = feature.id {
            id = FenceID(given.description)
        } else {
            id = FenceID("feature-\(context.index)")
            context.warning(at: context.path, "feature has no id; it is called \"\(id)\"")
        }
        let properties = feature.properties
        let settings = readSettings(properties, &context)
        guard let geometry = feature.geometry else {
            context.error(at: context.path.appending(.key("geometry")), "feature has no geometry (null)")
            return nil
        }
        // Paths are made only for a problem to report: a few thousand instructions each, a tenth of
        // making a typical fence.
        let featurePath = context.path
        guard let shape = makeShape(geometry, radius: settings.radius, radiusIsDefault: settings.radiusIsDefault,
                                    path: featurePath.appending(.key("geometry")), &context) else { return nil }
        checkCoordinates(of: shape, path: featurePath.appending(.key("geometry")), &context)
        guard !context.failed else { return nil }
        return Fence(id: id, region: Region(shape, buffer: settings.buffer ?? 0), name: settings.name,
                     dwellTime: settings.dwell, events: settings.events ?? .all, group: settings.group,
                     message: settings.message.map(MessageTemplate.init), expiresAt: settings.expires,
                     properties: properties, options: settings.options)
    }

    private struct Settings {
        var name: String?
        var dwell: Double?
        var radius: Double?
        var radiusIsDefault = false
        var buffer: Double?
        var events: GeofenceEventKinds?
        var group: String?
        var message: String?
        var expires: Date?
        var options = DetectionOptions()
    }

    private func readSettings(_ properties: [String: JSONValue], _ context: inout Context) -> Settings {
        var settings = Settings()
        // Most features carry only their author's own properties: then nothing below would find a key
        // (twenty-odd lookups per feature, a sixth of making a fence).
        guard properties.keys.contains(where: FenceProperties.isSetting) else {
            if let radius = options.defaultRadius {
                settings.radius = radius
                settings.radiusIsDefault = true
            }
            return settings
        }
        if let value = properties[FenceProperties.name], !value.isNull {
            settings.name = value.stringValue ?? value.scalarText
        }

        func metres(_ key: String, allowZero: Bool = true) -> Double? {
            guard let value = properties[key], !value.isNull else { return nil }
            guard let number = value.doubleValue ?? value.stringValue.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }),
                  number.isFinite, number > 0 || (allowZero && number == 0)
            else {
                context.error(at: context.propertyPath(key), "\(key) must be a \(allowZero ? "non-negative" : "positive") number, not \(value.summary)")
                return nil
            }
            return number
        }

        if let seconds = metres(FenceProperties.dwell) {
            settings.dwell = seconds
            if properties[FenceProperties.mapboxDwellTime] != nil {
                context.warning(at: context.propertyPath(FenceProperties.mapboxDwellTime),
                                "both \(FenceProperties.dwell) and \(FenceProperties.mapboxDwellTime) are set; \(FenceProperties.dwell) is used")
            }
        } else if let minutes = metres(FenceProperties.mapboxDwellTime) {
            settings.dwell = minutes * 60
        }
        settings.radius = metres(FenceProperties.radius, allowZero: false) ?? metres(FenceProperties.mapboxPointRadius, allowZero: false)
        if settings.radius == nil, let radius = options.defaultRadius {
            settings.radius = radius
            settings.radiusIsDefault = true
        }
        settings.buffer = metres(FenceProperties.buffer)

        if let value = properties[FenceProperties.events], !value.isNull {
            let names: [JSONValue]
            if let array = value.arrayValue {
                names = array
            } else if let text = value.stringValue {
                names = text.split(separator: ",").map { .string($0.trimmingCharacters(in: .whitespaces)) }
            } else {
                names = [value]
            }
            var kinds: GeofenceEventKinds = []
            for (offset, name) in names.enumerated() {
                if let text = name.stringValue, let kind = GeofenceEventKind(rawValue: text.lowercased()) {
                    kinds.insert(GeofenceEventKinds(kind))
                } else {
                    context.error(at: context.propertyPath(FenceProperties.events).appending(.index(offset)),
                                  "unknown event \(name.summary); expected \"entry\", \"dwell\", \"exit\", \"cross\" or \"inside\"")
                }
            }
            settings.events = kinds
        }
        if let value = properties[FenceProperties.group], !value.isNull {
            if let text = value.stringValue ?? value.scalarText {
                settings.group = text
            } else {
                context.error(at: context.propertyPath(FenceProperties.group), "group must be a string, not \(value.summary)")
            }
        }
        if let value = properties[FenceProperties.message], !value.isNull {
            if let text = value.stringValue {
                settings.message = text
            } else {
                context.error(at: context.propertyPath(FenceProperties.message), "message must be a string, not \(value.summary)")
            }
        }
        if let value = properties[FenceProperties.expires], !value.isNull {
            if let text = value.stringValue, let date = RFC3339.date(from: text) {
                settings.expires = date
            } else if let seconds = value.doubleValue, seconds.isFinite {
                settings.expires = Date(timeIntervalSince1970: seconds)
            } else {
                context.error(at: context.propertyPath(FenceProperties.expires),
                              "expiry must be an RFC 3339 time such as \"2026-01-31T18:00:00Z\" or seconds since 1970, not \(value.summary)")
            }
        }
        let (options, optionProblems) = DetectionOptions.read(from: properties)
        settings.options = options
        for problem in optionProblems { context.error(at: context.propertyPath(problem.key), problem.message) }
        return settings
    }

    // MARK: - Geometry

    private func makeShape(_ geometry: GeoJSON.Geometry, radius: Double?, radiusIsDefault: Bool = false,
                           path lazyPath: @autoclosure () -> JSONPath, _ context: inout Context) -> Region.Shape? {
        var path: JSONPath { lazyPath() }
        func needRadius(_ what: String) -> Double? {
            if let radius {
                if radiusIsDefault {
                    // Said aloud: a missing radius is more often an oversight than a wish for the default.
                    context.warning(at: path, "\(what) fence sets no radius (\"\(FenceProperties.radius)\" or \"\(FenceProperties.mapboxPointRadius)\"); it gets the default radius of \(radius == radius.rounded() && abs(radius) < 1e15 ? String(Int64(radius)) : String(radius)) m")
                }
                return radius
            }
            context.error(at: path, "\(what) fence needs a radius: set \"\(FenceProperties.radius)\" (metres) or \"\(FenceProperties.mapboxPointRadius)\", or give a default radius")
            return nil
        }
        func coordinate(_ p: GeoJSON.Position) -> Coordinate {
            Coordinate(latitude: p.latitude, longitude: p.longitude)
        }
        func polygon(_ rings: [[GeoJSON.Position]], path: () -> JSONPath) -> Polygon? {
            guard !rings.isEmpty else {
                context.error(at: path(), "polygon has no rings")
                return nil
            }
            for (r, ring) in rings.enumerated() {
                var ringPath: JSONPath { path().appending(.index(r)) }
                guard ring.count >= 4 else {
                    context.error(at: ringPath, "ring has \(ring.count) positions; a closed ring needs at least 4")
                    return nil
                }
                if ring.first.map(coordinate) != ring.last.map(coordinate) {
                    context.error(at: ringPath, "ring is not closed: its first and last positions differ")
                    return nil
                }
            }
            return Polygon(rings: rings.map { $0.map(coordinate) })
        }

        switch geometry {
        case .point(let point):
            guard let r = needRadius("Point") else { return nil }
            return .circle(center: coordinate(point.coordinates), radius: r)
        case .multiPoint(let points):
            guard let r = needRadius("MultiPoint") else { return nil }
            guard !points.coordinates.isEmpty else {
                context.error(at: path.appending(.key("coordinates")), "MultiPoint has no positions")
                return nil
            }
            return .corridor(lines: points.coordinates.map { [coordinate($0)] }, radius: r)
        case .lineString(let line):
            guard let r = needRadius("LineString (corridor)") else { return nil }
            guard !line.coordinates.isEmpty else {
                context.error(at: path.appending(.key("coordinates")), "LineString has no positions")
                return nil
            }
            return .corridor(lines: [line.coordinates.map(coordinate)], radius: r)
        case .multiLineString(let lines):
            guard let r = needRadius("MultiLineString (corridor)") else { return nil }
            guard lines.coordinates.contains(where: { !$0.isEmpty }) else {
                context.error(at: path.appending(.key("coordinates")), "MultiLineString has no positions")
                return nil
            }
            return .corridor(lines: lines.coordinates.filter { !$0.isEmpty }.map { $0.map(coordinate) }, radius: r)
        case .polygon(let p):
            return polygon(p.coordinates, path: { path.appending(.key("coordinates")) }).map { .polygons([$0]) }
        case .multiPolygon(let mp):
            var polygons: [Polygon] = []
            for (i, rings) in mp.coordinates.enumerated() {
                guard let p = polygon(rings, path: { path.appending(.key("coordinates")).appending(.index(i)) }) else { return nil }
                polygons.append(p)
            }
            guard !polygons.isEmpty else {
                context.error(at: path.appending(.key("coordinates")), "MultiPolygon has no polygons")
                return nil
            }
            return .polygons(polygons)
        case .geometryCollection(let collection):
            var polygons: [Polygon] = []
            for (i, member) in collection.geometries.enumerated() {
                let memberPath = path.appending(.key("geometries")).appending(.index(i))
                switch member {
                case .polygon, .multiPolygon:
                    guard case .polygons(let more)? = makeShape(member, radius: radius, path: memberPath, &context)
                    else { return nil }
                    polygons += more
                default:
                    context.error(at: memberPath, "a GeometryCollection fence may hold only Polygons and MultiPolygons, not a \(member.typeName)")
                    return nil
                }
            }
            guard !polygons.isEmpty else {
                context.error(at: path, "GeometryCollection has no polygons")
                return nil
            }
            return .polygons(polygons)
        }
    }

    /// Errors for positions that are not on Earth; warnings for self-intersecting rings.
    private func checkCoordinates(of shape: Region.Shape, path lazyPath: @autoclosure () -> JSONPath, _ context: inout Context) {
        func valid(_ c: Coordinate) -> Bool {
            c.latitude.isFinite && c.longitude.isFinite && abs(c.latitude) <= 90 && abs(c.longitude) <= 540
        }
        var coordinatesPath: JSONPath { lazyPath().appending(.key("coordinates")) }
        switch shape {
        case .circle(let center, _):
            if !valid(center) { context.error(at: coordinatesPath, "position \(center) is not on Earth") }
        case .corridor(let lines, _):
            if let bad = lines.joined().first(where: { !valid($0) }) {
                context.error(at: coordinatesPath, "position \(bad) is not on Earth")
            }
        case .polygons(let polygons):
            for (p, polygon) in polygons.enumerated() {
                for (r, ring) in polygon.rings.enumerated() {
                    if let bad = ring.first(where: { !valid($0) }) {
                        context.error(at: coordinatesPath, "position \(bad) is not on Earth")
                        return
                    }
                    if let crossing = RingValidation.firstSelfIntersection(ring) {
                        let where_ = polygons.count > 1 ? "polygon \(p), ring \(r)" : "ring \(r)"
                        context.warning(at: coordinatesPath,
                                        "\(where_) intersects itself (edges \(crossing.0) and \(crossing.1)); it is used with the even-odd rule")
                    }
                }
            }
        }
    }
}

extension JSONValue {
    /// A number or boolean as text, for properties given as scalars where text is expected.
    var scalarText: String? {
        switch self {
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        default: nil
        }
    }

    /// A short description of the value for error messages.
    var summary: String {
        switch self {
        case .null: "null"
        case .bool(let value): String(value)
        case .integer(let value): String(value)
        case .double(let value): String(value)
        case .string(let value): "\"\(value.count > 40 ? String(value.prefix(40)) + "…" : value)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}
