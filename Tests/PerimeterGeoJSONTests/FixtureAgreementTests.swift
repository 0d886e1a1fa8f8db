import Foundation
import PerimeterTestSupport
import Testing
@testable import PerimeterGeoJSON

/// The fast reader and JSONDecoder must load every shared fixture identically, with no errors.
@Suite(.enabled(if: Fixtures.available)) struct FixtureAgreementTests {
    static func files(_ folder: String, extensions: Set<String>) -> [String] {
        let root = Fixtures.url(folder)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { extensions.contains($0.pathExtension) }
            .map { folder + "/" + $0.path.dropFirst(root.path.count + 1) }.sorted()
    }

    /// Fixture bytes; a few antimeridian files are git symlinks stored as text ("../flat/x.json"): follow them.
    static func bytes(_ relative: String) throws -> [UInt8] {
        let data = try Fixtures.data(relative)
        if data.count < 256, let text = String(data: data, encoding: .utf8), text.hasSuffix(".json"), !text.contains("{") {
            let target = Fixtures.url(relative).deletingLastPathComponent().appendingPathComponent(text)
            return [UInt8](try Data(contentsOf: target))
        }
        return [UInt8](data)
    }

    /// Fixtures that break an RFC 7946 rule, with the error the reader must give.
    static let knownInvalid = [
        "conformance/antimeridian/input/issues-187.json":
            "8:7: error: linear ring is not closed: its last position differs from its first (at $.coordinates[0][3])",
    ]

    static let geojsonFiles = files("polygons", extensions: ["geojson"]) + ["yellowstone/yellowstone.geojson"]
    static let antimeridianFiles = files("conformance/antimeridian", extensions: ["json"])

    @Test func foundTheFixtures() {
        #expect(Self.geojsonFiles.count >= 9)
        #expect(Self.antimeridianFiles.count >= 100)
    }

    @Test(arguments: geojsonFiles + antimeridianFiles)
    func fastReaderAgreesWithJSONDecoder(file: String) throws {
        let bytes = try Self.bytes(file)
        let fast = GeoJSONReader().read(bytes)
        if let expected = Self.knownInvalid[file] {
            // The file parses, and the reader names its one structural error; JSONDecoder rejects it too.
            #expect(fast.errors.map(\.description) == [expected])
            #expect(throws: DecodingError.self) { try JSONDecoder().decode(GeoJSON.Object.self, from: Data(bytes)) }
            return
        }
        #expect(!fast.hasErrors, "\(fast.errors.prefix(3))")
        let object = try #require(fast.object)
        let decoded = try JSONDecoder().decode(GeoJSON.Object.self, from: Data(bytes))
        #expect(normalized(decoded) == normalized(object))
        // And the writer's output reads back to the same model.
        #expect(GeoJSONReader().read(Array(JSONWriter().string(object).utf8)).object == object)
    }

    @Test func yellowstoneHasEightNamedPolygonsWithStringIDs() throws {
        let object = try #require(GeoJSONReader().read(Self.bytes("yellowstone/yellowstone.geojson")).object)
        #expect(object.features.count == 8)
        #expect(object.features.allSatisfy { if case .string? = $0.id { true } else { false } })
    }
}
