extension JSONWriter {
    /// Appends the JSON text of a GeoJSON object.
    public func write(_ object: GeoJSON.Object, into output: inout [UInt8]) {
        switch object {
        case .geometry(let geometry): write(geometry, into: &output)
        case .feature(let feature): write(feature, into: &output)
        case .featureCollection(let collection): write(collection, into: &output)
        }
    }

    /// The JSON text of a GeoJSON object.
    public func string(_ object: GeoJSON.Object) -> String {
        var output: [UInt8] = []
        write(object, into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends a `FeatureCollection`.
    public func write(_ collection: GeoJSON.FeatureCollection, into output: inout [UInt8]) {
        output.append(contentsOf: #"{"type":"FeatureCollection""#.utf8)
        writeBoundingBox(collection.bbox, into: &output)
        output.append(contentsOf: #","features":["#.utf8)
        for (k, feature) in collection.features.enumerated() {
            if k > 0 { output.append(UInt8(ascii: ",")) }
            write(feature, into: &output)
        }
        output.append(contentsOf: "]}".utf8)
    }

    /// Appends a `Feature` (`"geometry":null` when it has none; `properties` always written).
    public func write(_ feature: GeoJSON.Feature, into output: inout [UInt8]) {
        output.append(contentsOf: #"{"type":"Feature""#.utf8)
        if let id = feature.id {
            output.append(contentsOf: #","id":"#.utf8)
            switch id {
            case .string(let text): writeString(text, into: &output)
            case .integer(let number): output.append(contentsOf: String(number).utf8)
            case .double(let number): writeNumber(number, into: &output)
            }
        }
        writeBoundingBox(feature.bbox, into: &output)
        output.append(contentsOf: #","geometry":"#.utf8)
        if let geometry = feature.geometry { write(geometry, into: &output) } else { output.append(contentsOf: "null".utf8) }
        output.append(contentsOf: #","properties":"#.utf8)
        writeObject(feature.properties, into: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Appends a geometry object.
    public func write(_ geometry: GeoJSON.Geometry, into output: inout [UInt8]) {
        output.append(contentsOf: #"{"type":""#.utf8)
        output.append(contentsOf: geometry.typeName.utf8)
        output.append(UInt8(ascii: "\""))
        writeBoundingBox(geometry.bbox, into: &output)
        switch geometry {
        case .geometryCollection(let collection):
            output.append(contentsOf: #","geometries":["#.utf8)
            for (k, member) in collection.geometries.enumerated() {
                if k > 0 { output.append(UInt8(ascii: ",")) }
                write(member, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .point(let g):
            output.append(contentsOf: #","coordinates":"#.utf8)
            writePosition(g.coordinates, into: &output)
        case .multiPoint(let g):
            output.append(contentsOf: #","coordinates":"#.utf8)
            writePositions(g.coordinates, into: &output)
        case .lineString(let g):
            output.append(contentsOf: #","coordinates":"#.utf8)
            writePositions(g.coordinates, into: &output)
        case .multiLineString(let g):
            output.append(contentsOf: #","coordinates":"#.utf8)
            writeList(g.coordinates, into: &output) { writePositions($0, into: &$1) }
        case .polygon(let g):
            output.append(contentsOf: #","coordinates":"#.utf8)
            writeList(g.coordinates, into: &output) { writePositions($0, into: &$1) }
        case .multiPolygon(let g):
            output.append(contentsOf: #","coordinates":"#.utf8)
            writeList(g.coordinates, into: &output) { rings, out in
                writeList(rings, into: &out) { writePositions($0, into: &$1) }
            }
        }
        output.append(UInt8(ascii: "}"))
    }

    private func writeList<T>(_ items: [T], into output: inout [UInt8], _ element: (T, inout [UInt8]) -> Void) {
        output.append(UInt8(ascii: "["))
        for (k, item) in items.enumerated() {
            if k > 0 { output.append(UInt8(ascii: ",")) }
            element(item, &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    private func writePositions(_ positions: [GeoJSON.Position], into output: inout [UInt8]) {
        writeList(positions, into: &output) { writePosition($0, into: &$1) }
    }

    private func writePosition(_ position: GeoJSON.Position, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        writeNumber(position.longitude, into: &output)
        output.append(UInt8(ascii: ","))
        writeNumber(position.latitude, into: &output)
        if let altitude = position.altitude {
            output.append(UInt8(ascii: ","))
            writeNumber(altitude, into: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    private func writeBoundingBox(_ box: GeoJSON.BoundingBox?, into output: inout [UInt8]) {
        guard let box else { return }
        output.append(contentsOf: #","bbox":"#.utf8)
        writeList(box.numbers, into: &output) { writeNumber($0, into: &$1) }
    }
}
