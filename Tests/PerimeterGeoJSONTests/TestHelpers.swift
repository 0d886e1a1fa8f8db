import Foundation
@testable import PerimeterGeoJSON

/// Reads GeoJSON text with the fast reader.
func fastRead(_ text: String) -> GeoJSONReadResult {
    GeoJSONReader().read(Array(text.utf8))
}

/// Decodes GeoJSON text with JSONDecoder.
func decoderRead(_ text: String) throws -> GeoJSON.Object {
    try JSONDecoder().decode(GeoJSON.Object.self, from: Data(text.utf8))
}

/// JSONDecoder reads `1.0` as an integer; compare numbers by value so both paths can be compared.
func normalized(_ value: JSONValue) -> JSONValue {
    switch value {
    case .double(let number): if let exact = Int64(exactly: number) { return .integer(exact) }; return value
    case .array(let elements): return .array(elements.map(normalized))
    case .object(let members): return .object(members.mapValues(normalized))
    default: return value
    }
}

/// The object with every property value normalized (see ``normalized(_:)``).
func normalized(_ object: GeoJSON.Object) -> GeoJSON.Object {
    func feature(_ f: GeoJSON.Feature) -> GeoJSON.Feature {
        var f = f
        f.properties = f.properties.mapValues(normalized)
        if case .double(let number)? = f.id, let exact = Int64(exactly: number) { f.id = .integer(exact) }
        return f
    }
    switch object {
    case .geometry: return object
    case .feature(let f): return .feature(feature(f))
    case .featureCollection(var c):
        c.features = c.features.map(feature)
        return .featureCollection(c)
    }
}

/// Wraps a geometry's JSON text in a one-feature collection with id "f".
func inCollection(_ geometry: String) -> String {
    #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"f","properties":{},"geometry":"# + geometry + "}]}"
}
