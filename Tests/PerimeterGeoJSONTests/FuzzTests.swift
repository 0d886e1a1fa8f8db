import Testing
import PerimeterTestSupport
@testable import PerimeterGeoJSON

/// Random mutations of valid documents and random bytes: the reader must never trap, and must always explain
/// a missing object.
@Suite struct FuzzTests {
    static let seedDocument = Array("""
        {"type":"FeatureCollection","bbox":[-10,-10,10,10],"features":[
         {"type":"Feature","id":"a","properties":{"name":"é\\u00e9\\ud83d\\ude00","n":[1,2.5e3,null,true]},
          "geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]],[[0.1,0.1],[0.2,0.1],[0.2,0.2],[0.1,0.1]]]}},
         {"type":"Feature","id":2,"properties":null,"geometry":{"type":"GeometryCollection","geometries":[
           {"type":"LineString","coordinates":[[0,0,5],[1,1,6]]},{"type":"MultiPoint","coordinates":[[2,2]]}]}},
         {"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[170,0],[-170,0],[-170,1],[170,0]]]]},"properties":{}}
        ]}
        """.utf8)

    static func check(_ bytes: [UInt8]) {
        let result = GeoJSONReader(options: .init(maxDepth: 64)).read(bytes)
        if result.object == nil { #expect(result.hasErrors) }
        for problem in result.problems {
            #expect(problem.line >= 1 && problem.column >= 1 && problem.offset <= bytes.count)
            #expect(!problem.message.isEmpty)
        }
        let syntaxOK = (try? JSONParser(maxDepth: 64).parse(bytes)) != nil
        if !syntaxOK { #expect(result.object == nil) }
    }

    @Test func seedDocumentIsValid() {
        let result = GeoJSONReader().read(Self.seedDocument)
        #expect(result.problems.isEmpty)
        #expect(result.object?.features.count == 3)
    }

    @Test func mutationsNeverTrap() {
        var rng = SplitMix64(seed: 2024)
        let interesting = Array("{}[],:\"\\-0123456789.eE+tfnu ".utf8) + [0x00, 0x80, 0xC3, 0xED, 0xFF, 0x0A]
        var failures = 0
        for _ in 0..<3000 {
            var bytes = Self.seedDocument
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                let k = Int.random(in: 0..<max(1, bytes.count), using: &rng)
                switch Int.random(in: 0..<5, using: &rng) {
                case 0: if !bytes.isEmpty { bytes[k] = interesting.randomElement(using: &rng)! }
                case 1: bytes.insert(interesting.randomElement(using: &rng)!, at: min(k, bytes.count))
                case 2: if !bytes.isEmpty { bytes.remove(at: k) }
                case 3: bytes = Array(bytes.prefix(k))
                default: if !bytes.isEmpty { bytes[k] = UInt8.random(in: 0...255, using: &rng) }
                }
            }
            if GeoJSONReader().read(bytes).hasErrors { failures += 1 }
            Self.check(bytes)
        }
        #expect(failures > 1000)
    }

    @Test func randomBytesNeverTrap() {
        var rng = SplitMix64(seed: 5)
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            Self.check([UInt8(ascii: "{")] + bytes)
            Self.check(bytes)
        }
    }

    @Test func deepGeometryCollectionsHitTheDepthLimit() {
        let open = String(repeating: #"{"type":"GeometryCollection","geometries":["#, count: 200)
        let result = fastRead(open + String(repeating: "]}", count: 200))
        #expect(result.object == nil)
        #expect(result.problems.first?.message == "nesting deeper than 256 levels")
    }
}
