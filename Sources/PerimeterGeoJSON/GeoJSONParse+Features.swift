extension GeoJSONParse {
    /// Reads a FeatureCollection object; bad features are reported and left out.
    mutating func readFeatureCollection() throws(JSONScanner.Failure) -> GeoJSON.FeatureCollection {
        let objectStart = s.index
        var features: [GeoJSON.Feature] = []
        var bbox: GeoJSON.BoundingBox?
        var sawFeatures = false
        try forEachMember { (p: inout GeoJSONParse, member) throws(JSONScanner.Failure) in
            switch member {
            case .features:
                sawFeatures = true
                // Paths are popped only on success: after a syntax error they still say where it happened.
                p.path.append(.key("features"))
                if p.s.peek() != UInt8(ascii: "[") {
                    try p.rejectValue("\"features\" must be an array, found \(p.s.currentDescription)", depth: 1)
                } else if p.s.open(UInt8(ascii: "["), close: UInt8(ascii: "]")) {
                    var index = 0
                    repeat {
                        p.path.append(.index(index))
                        p.featureIndex = index
                        _ = p.s.peek()
                        let start = p.s.index
                        if let feature = try p.readFeatureElement() {
                            features.append(feature)
                            p.keptFeatureIndices.append(index)
                            p.keptFeatureRanges.append(start ..< p.s.index)
                        }
                        p.featureIndex = nil
                        p.path.removeLast()
                        index += 1
                    } while try p.s.separator(close: UInt8(ascii: "]"), in: "array")
                }
                p.path.removeLast()
            case .bbox:
                bbox = try p.readBoundingBox(depth: 1)
            default:
                try p.s.skipValue(depth: 1)
            }
        }
        if !sawFeatures { report(.error, "FeatureCollection has no \"features\" member", at: objectStart) }
        return GeoJSON.FeatureCollection(features, bbox: bbox)
    }

    /// Reads one element of `features`: it must be an object of type `Feature`.
    private mutating func readFeatureElement() throws(JSONScanner.Failure) -> GeoJSON.Feature? {
        guard s.peek() == UInt8(ascii: "{") else {
            try rejectValue("expected a Feature object, found \(s.currentDescription)", depth: 2)
            return nil
        }
        switch try peekType() {
        case .name("Feature"):
            return try readFeature(depth: 2)
        case .name(let name):
            try rejectValue("expected type \"Feature\", found \"\(name)\"", depth: 2)
        case .notString(let found):
            try rejectValue("\"type\" must be a string, found \(found)", depth: 2)
        case .missing:
            try rejectValue("Feature has no \"type\" member", depth: 2)
        }
        return nil
    }

    /// Reads a Feature object; returns `nil` (after reporting) when it has an error.
    mutating func readFeature(depth: Int) throws(JSONScanner.Failure) -> GeoJSON.Feature? {
        let firstProblem = pending.count
        let objectStart = s.index
        var ok = true
        var feature = GeoJSON.Feature(geometry: nil)
        var sawGeometry = false
        try forEachMember { (p: inout GeoJSONParse, member) throws(JSONScanner.Failure) in
            switch member {
            case .id:
                switch p.s.peek() {
                case UInt8(ascii: "\""):
                    feature.id = .string(try p.s.readString())
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    switch try p.s.readNumber() {
                    case .integer(let value): feature.id = .integer(value)
                    case .double(let value): feature.id = .double(value)
                    }
                case UInt8(ascii: "n"):
                    try p.s.literal("null")
                    feature.id = nil
                default:
                    ok = false
                    try p.rejectValue("feature id must be a string or a number, found \(p.s.currentDescription)",
                                      depth: depth + 1, extra: [.key("id")])
                }
            case .geometry:
                sawGeometry = true
                p.path.append(.key("geometry"))
                switch p.s.peek() {
                case UInt8(ascii: "n"):
                    try p.s.literal("null")
                    feature.geometry = nil
                case UInt8(ascii: "{"):
                    feature.geometry = try p.readGeometry(depth: depth + 1)
                    if feature.geometry == nil { ok = false }
                default:
                    ok = false
                    try p.rejectValue("\"geometry\" must be an object or null, found \(p.s.currentDescription)",
                                      depth: depth + 1)
                }
                p.path.removeLast()
            case .properties:
                switch p.s.peek() {
                case UInt8(ascii: "n"):
                    try p.s.literal("null")
                    feature.properties = [:]
                case UInt8(ascii: "{"):
                    p.path.append(.key("properties"))
                    feature.properties = try p.s.readObject(depth: depth + 1)
                    p.path.removeLast()
                default:
                    ok = false
                    try p.rejectValue("\"properties\" must be an object or null, found \(p.s.currentDescription)",
                                      depth: depth + 1, extra: [.key("properties")])
                }
            case .bbox:
                let before = p.pending.count
                feature.bbox = try p.readBoundingBox(depth: depth + 1)
                if p.pending.count > before { ok = false }
            default:
                try p.s.skipValue(depth: depth + 1)
            }
        }
        if !sawGeometry {
            report(.warning, "Feature has no \"geometry\" member; read as null", at: objectStart)
        }
        if let id = feature.id {
            for k in firstProblem..<pending.count { pending[k].featureID = id }
        }
        return ok ? feature : nil
    }

    /// Reads a `bbox` member's value; reports and returns `nil` unless it is an array of 4 or 6 finite numbers.
    mutating func readBoundingBox(depth: Int) throws(JSONScanner.Failure) -> GeoJSON.BoundingBox? {
        let start = s.index
        var numbers: [Double] = []
        var ok = s.peek() == UInt8(ascii: "[")
        if ok {
            if s.open(UInt8(ascii: "["), close: UInt8(ascii: "]")) {
                repeat {
                    switch s.peek() {
                    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                        let value = try s.readDouble()
                        if !value.isFinite { ok = false }
                        numbers.append(value)
                    default:
                        ok = false
                        try s.skipValue(depth: depth + 1)
                    }
                } while try s.separator(close: UInt8(ascii: "]"), in: "array")
            }
        } else {
            try s.skipValue(depth: depth)
        }
        if ok, let box = GeoJSON.BoundingBox(numbers: numbers) { return box }
        report(.error, GeoJSON.Issue.Kind.badBoundingBox.message, at: start, extra: [.key("bbox")])
        return nil
    }
}
