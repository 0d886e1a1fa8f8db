import Foundation
import PerimeterTestSupport
import Testing
@testable import PerimeterGeoJSON

/// `GeoJSON.Position` keeps its optional altitude in a plain `Double` (24 bytes a position): it must
/// behave exactly as a struct of longitude, latitude and `Double?` with synthesized conformances.
@Suite struct PositionTests {
    /// The model: what `Position` was before, field for field.
    struct Model: Hashable {
        var longitude: Double
        var latitude: Double
        var altitude: Double?
    }

    /// Doubles that are easy to get wrong: both zeros, infinities, NaNs (the quiet one, one with a
    /// payload, a signalling one and the very bit pattern that stands for "no altitude"), and plain values.
    static let awkward: [Double] = [
        0, -0.0, 1, -1, 1e-300, .infinity, -.infinity, .nan, -Double.nan, Double(nan: 7, signaling: false),
        Double(nan: 1, signaling: true), Double(bitPattern: GeoJSON.Position.noAltitude), .greatestFiniteMagnitude,
        Double.leastNonzeroMagnitude, 48.7169214, 2.35,
    ]

    static func value(_ random: inout SplitMix64) -> Double {
        random.next() % 3 == 0 ? Double.random(in: -1000...1000, using: &random).rounded() / 8
                               : awkward[Int(random.next() % UInt64(awkward.count))]
    }

    static func altitude(_ random: inout SplitMix64) -> Double? {
        random.next() % 4 == 0 ? nil : value(&random)
    }

    @Test func itIs24Bytes() {
        #expect(MemoryLayout<GeoJSON.Position>.size == 24)
        #expect(MemoryLayout<GeoJSON.Position>.stride == 24)
    }

    @Test func itPrintsAsLongitudeLatitudeAndOptionalAltitude() {
        #expect(String(describing: GeoJSON.Position(longitude: 1, latitude: 2)) == "Position(longitude: 1.0, latitude: 2.0, altitude: nil)")
        #expect(String(describing: GeoJSON.Position(longitude: 1, latitude: 2, altitude: 3)) == "Position(longitude: 1.0, latitude: 2.0, altitude: Optional(3.0))")
    }

    @Test func theAltitudeReadsBackAsGiven() {
        var random = SplitMix64(seed: 18)
        for _ in 0..<20_000 {
            let given = Self.altitude(&random)
            var p = GeoJSON.Position(longitude: Self.value(&random), latitude: Self.value(&random), altitude: given)
            for _ in 0..<2 {
                switch given {
                case nil: #expect(p.altitude == nil)
                case let value? where value.isNaN: #expect(p.altitude?.isNaN == true, "a NaN altitude is not \"none\"")
                case let value?: #expect(p.altitude?.bitPattern == value.bitPattern)
                }
                p.altitude = given  // the setter stores as the initializer does
            }
        }
        #expect(GeoJSON.Position(longitude: 0, latitude: 0, altitude: Double(bitPattern: GeoJSON.Position.noAltitude)).altitude?.isNaN == true)
    }

    @Test func equalityAndHashingAreTheModels() {
        var random = SplitMix64(seed: 15)
        func pair() -> (GeoJSON.Position, Model) {
            let lon = Self.value(&random), lat = Self.value(&random), alt = Self.altitude(&random)
            return (GeoJSON.Position(longitude: lon, latitude: lat, altitude: alt), Model(longitude: lon, latitude: lat, altitude: alt))
        }
        var equalPairs = 0
        for _ in 0..<50_000 {
            let (a, modelA) = pair()
            // Half the time the second is a copy with one field changed, so equal pairs are common.
            var (b, modelB) = random.next() % 2 == 0 ? pair() : (a, modelA)
            switch random.next() % 4 {
            case 0: let v = Self.value(&random); b.longitude = v; modelB.longitude = v
            case 1: let v = Self.altitude(&random); b.altitude = v; modelB.altitude = v
            default: break
            }
            #expect((a == b) == (modelA == modelB), "\(modelA) vs \(modelB)")
            if modelA == modelB {
                equalPairs += 1
                #expect(a.hashValue == b.hashValue)
            }
            // A NaN altitude is stored as the quiet NaN, whose hash differs from a NaN with a payload;
            // no NaN is equal to anything, so that cannot break hashing.
            if modelA.altitude?.isNaN != true {
                #expect(a.hashValue == modelA.hashValue, "hashed as the model's three fields")
            }
        }
        #expect(equalPairs > 5_000)
    }

    @Test func aPositionWithoutAltitudeIsWrittenAndReadWithTwoNumbers() throws {
        let text = #"{"type":"LineString","coordinates":[[1.5,2.5],[3.0,4.0,-5.25]]}"#
        guard case .lineString(let line)? = fastRead(text).object.flatMap({ if case .geometry(let g) = $0 { g } else { nil } })
        else { Issue.record("not read"); return }
        #expect(line.coordinates == [GeoJSON.Position(longitude: 1.5, latitude: 2.5), GeoJSON.Position(longitude: 3, latitude: 4, altitude: -5.25)])
        #expect(JSONWriter().string(.geometry(.lineString(line))) == text)
        let decoded = try JSONDecoder().decode([GeoJSON.Position].self, from: Data("[[1.5,2.5],[3,4,-5.25]]".utf8))
        #expect(decoded == line.coordinates)
        #expect(String(decoding: try JSONEncoder().encode(decoded), as: UTF8.self) == "[[1.5,2.5],[3,4,-5.25]]")
    }
}
