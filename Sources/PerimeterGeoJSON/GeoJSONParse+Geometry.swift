extension GeoJSONParse {
    /// Up to four coordinate indices below `coordinates`, kept without allocation until a problem needs them.
    struct Indices {
        private var values: (Int, Int, Int, Int) = (0, 0, 0, 0)
        private var count = 0

        func adding(_ index: Int) -> Indices {
            var next = self
            switch count {
            case 0: next.values.0 = index
            case 1: next.values.1 = index
            case 2: next.values.2 = index
            default: next.values.3 = index
            }
            next.count = min(count + 1, 4)
            return next
        }

        var components: [JSONPath.Component] {
            [values.0, values.1, values.2, values.3].prefix(count).map { .index($0) }
        }
    }

    private enum Kind: String {
        case point = "Point", multiPoint = "MultiPoint", lineString = "LineString"
        case multiLineString = "MultiLineString", polygon = "Polygon", multiPolygon = "MultiPolygon"
        case geometryCollection = "GeometryCollection"
    }

    /// Reads a geometry object (the current byte is `{`); returns `nil` (after reporting) when it has an error.
    mutating func readGeometry(depth: Int) throws(JSONScanner.Failure) -> GeoJSON.Geometry? {
        let objectStart = s.index
        let kind: Kind
        switch try peekType() {
        case .name(let name):
            guard let known = Kind(rawValue: name) else {
                try rejectValue("unknown geometry type \"\(name)\"", depth: depth, extra: [.key("type")])
                return nil
            }
            kind = known
        case .notString(let found):
            try rejectValue("\"type\" must be a string, found \(found)", depth: depth, extra: [.key("type")])
            return nil
        case .missing:
            try rejectValue("geometry has no \"type\" member", depth: depth)
            return nil
        }
        var geometry: GeoJSON.Geometry?
        var members: [GeoJSON.Geometry]?
        var bbox: GeoJSON.BoundingBox?
        var ok = true
        positionsInRange = true
        try forEachMember { (p: inout GeoJSONParse, member) throws(JSONScanner.Failure) in
            switch member {
            case .coordinates where kind != .geometryCollection:
                p.path.append(.key("coordinates"))
                geometry = try p.readCoordinates(kind, depth: depth + 1)
                if geometry == nil { ok = false }
                p.path.removeLast()
            case .geometries where kind == .geometryCollection:
                p.path.append(.key("geometries"))
                members = try p.readGeometries(depth: depth + 1)
                if members == nil { ok = false }
                p.path.removeLast()
            case .bbox:
                let before = p.pending.count
                bbox = try p.readBoundingBox(depth: depth + 1)
                if p.pending.count > before { ok = false }
            default:
                try p.s.skipValue(depth: depth + 1)
            }
        }
        if kind == .geometryCollection {
            if let members { return ok ? .geometryCollection(GeoJSON.GeometryCollection(members, bbox: bbox)) : nil }
            if ok { report(.error, "GeometryCollection has no \"geometries\" member", at: objectStart) }
            return nil
        }
        guard ok else { return nil }
        guard var geometry else {
            report(.error, "\(kind.rawValue) has no \"coordinates\" member", at: objectStart)
            return nil
        }
        geometry.setBoundingBox(bbox)
        var issues: [GeoJSON.Issue] = []
        GeoJSON.Validation.check(geometry, into: &issues, positionsInRange: positionsInRange && kind != .geometryCollection)
        for issue in issues {
            report(issue.kind.severity, issue.kind.message, at: locate(issue.path, from: objectStart), extra: issue.path)
            if issue.kind.severity == .error { ok = false }
        }
        return ok ? geometry : nil
    }

    private mutating func readGeometries(depth: Int) throws(JSONScanner.Failure) -> [GeoJSON.Geometry]? {
        guard s.peek() == UInt8(ascii: "[") else {
            try rejectValue("\"geometries\" must be an array, found \(s.currentDescription)", depth: depth)
            return nil
        }
        var result: [GeoJSON.Geometry] = []
        var ok = true
        guard s.open(UInt8(ascii: "["), close: UInt8(ascii: "]")) else { return result }
        var index = 0
        repeat {
            path.append(.index(index))
            if s.peek() == UInt8(ascii: "{") {
                try s.checkDepth(depth + 2)
                if let geometry = try readGeometry(depth: depth + 1) { result.append(geometry) } else { ok = false }
            } else {
                ok = false
                try rejectValue("expected a geometry object, found \(s.currentDescription)", depth: depth + 1)
            }
            path.removeLast()
            index += 1
        } while try s.separator(close: UInt8(ascii: "]"), in: "array")
        return ok ? result : nil
    }

    private mutating func readCoordinates(_ kind: Kind, depth: Int) throws(JSONScanner.Failure) -> GeoJSON.Geometry? {
        let root = Indices()
        switch kind {
        case .point:
            positionsInRange = false
            return try readPosition(root, depth: depth).map { .point(GeoJSON.Point($0)) }
        case .multiPoint: return try readPositions(root, depth: depth).map { .multiPoint(GeoJSON.MultiPoint($0)) }
        case .lineString: return try readPositions(root, depth: depth).map { .lineString(GeoJSON.LineString($0)) }
        case .multiLineString:
            return try readPositionLists(root, depth: depth).map { .multiLineString(GeoJSON.MultiLineString($0)) }
        case .polygon: return try readPositionLists(root, depth: depth).map { .polygon(GeoJSON.Polygon($0)) }
        case .multiPolygon:
            guard let list = try readArray(root, depth: depth, of: "polygons (arrays of rings)", { (p: inout GeoJSONParse, at, d) throws(JSONScanner.Failure) in
                try p.readPositionLists(at, depth: d)
            }) else { return nil }
            return .multiPolygon(GeoJSON.MultiPolygon(list))
        case .geometryCollection: return nil
        }
    }

    /// Reads an array whose elements are read by `element`; `nil` if any element failed.
    @inline(__always)
    private mutating func readArray<T>(
        _ at: Indices, depth: Int, of what: String,
        _ element: (inout GeoJSONParse, Indices, Int) throws(JSONScanner.Failure) -> T?
    ) throws(JSONScanner.Failure) -> [T]? {
        guard s.peek() == UInt8(ascii: "[") else {
            try rejectValue("expected an array of \(what), found \(s.currentDescription)", depth: depth,
                            extra: at.components)
            return nil
        }
        try s.checkDepth(depth + 1)
        var result: [T] = []
        var ok = true
        guard s.open(UInt8(ascii: "["), close: UInt8(ascii: "]")) else { return result }
        var index = 0
        repeat {
            if !ok {
                // After the first bad element, the rest of the array is skipped: one report per array.
                try s.skipValue(depth: depth + 1)
            } else if let value = try element(&self, at.adding(index), depth + 1) {
                result.append(value)
            } else {
                ok = false
            }
            index += 1
        } while try s.separator(close: UInt8(ascii: "]"), in: "array")
        return ok ? result : nil
    }

    private mutating func readPositionLists(_ at: Indices, depth: Int) throws(JSONScanner.Failure) -> [[GeoJSON.Position]]? {
        try readArray(at, depth: depth, of: "arrays of positions") { (p: inout GeoJSONParse, at, d) throws(JSONScanner.Failure) in
            try p.readPositions(at, depth: d)
        }
    }

    /// Reads an array of positions through the scratch buffer, returning an exactly sized array.
    private mutating func readPositions(_ at: Indices, depth: Int) throws(JSONScanner.Failure) -> [GeoJSON.Position]? {
        guard s.peek() == UInt8(ascii: "[") else {
            try rejectValue("expected an array of positions, found \(s.currentDescription)", depth: depth,
                            extra: at.components)
            return nil
        }
        try s.checkDepth(depth + 1)
        scratch.removeAll()
        var ok = true
        if s.open(UInt8(ascii: "["), close: UInt8(ascii: "]")) {
            var index = 0
            repeat {
                if !ok {
                    // After the first bad position, the rest of the array is skipped: one report per array.
                    try s.skipValue(depth: depth + 1)
                } else if s.peek() == UInt8(ascii: "["), let (longitude, latitude) = s.readShortDecimalPair() {
                    // The common position, straight through; any other is read (and reported) below.
                    if !(abs(longitude) <= 180 && abs(latitude) <= 90) { positionsInRange = false }
                    scratch.append(GeoJSON.Position(longitude: longitude, latitude: latitude))
                } else if let position = try readPosition(at.adding(index), depth: depth + 1) {
                    positionsInRange = false
                    scratch.append(position)
                } else {
                    ok = false
                }
                index += 1
            } while try s.separator(close: UInt8(ascii: "]"), in: "array")
        }
        guard ok else { return nil }
        return scratch.array()
    }

    /// Reads `[longitude, latitude]` or `[longitude, latitude, altitude]`.
    @inline(__always)
    private mutating func readPosition(_ at: Indices, depth: Int) throws(JSONScanner.Failure) -> GeoJSON.Position? {
        let start = s.index
        guard s.peek() == UInt8(ascii: "[") else {
            try rejectValue("expected a position (array of numbers), found \(s.currentDescription)", depth: depth,
                            extra: at.components)
            return nil
        }
        s.index += 1
        var values: (Double, Double, Double) = (0, 0, 0)
        var count = 0
        var ok = true
        if s.peek() == UInt8(ascii: "]") {
            s.index += 1
        } else {
            repeat {
                switch s.peek() {
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    let value = try s.readDouble()
                    switch count {
                    case 0: values.0 = value
                    case 1: values.1 = value
                    case 2: values.2 = value
                    default: break
                    }
                default:
                    ok = false
                    try rejectValue("coordinate must be a number, found \(s.currentDescription)", depth: depth + 1,
                                    extra: at.components + [.index(count)])
                }
                count += 1
            } while try s.separator(close: UInt8(ascii: "]"), in: "array")
        }
        if count < 2 {
            report(.error, GeoJSON.Issue.Kind.shortPosition(count: count).message, at: start, extra: at.components)
            return nil
        }
        if count > 3 {
            report(.warning, GeoJSON.Issue.Kind.extraPositionNumbers(count: count).message, at: start,
                   extra: at.components)
        }
        guard ok else { return nil }
        return GeoJSON.Position(longitude: values.0, latitude: values.1, altitude: count >= 3 ? values.2 : nil)
    }
}

extension GeoJSON.Geometry {
    /// Sets the `bbox` of a coordinate geometry.
    mutating func setBoundingBox(_ box: GeoJSON.BoundingBox?) {
        switch self {
        case .point(var g): g.bbox = box; self = .point(g)
        case .multiPoint(var g): g.bbox = box; self = .multiPoint(g)
        case .lineString(var g): g.bbox = box; self = .lineString(g)
        case .multiLineString(var g): g.bbox = box; self = .multiLineString(g)
        case .polygon(var g): g.bbox = box; self = .polygon(g)
        case .multiPolygon(var g): g.bbox = box; self = .multiPolygon(g)
        case .geometryCollection(var g): g.bbox = box; self = .geometryCollection(g)
        }
    }
}
