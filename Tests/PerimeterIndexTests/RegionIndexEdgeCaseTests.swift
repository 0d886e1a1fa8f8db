import PerimeterGeometry
import Testing
import PerimeterTestSupport
@testable import PerimeterIndex

/// Small, hand-checked cases: empty input, odd coordinates, the antimeridian, malformed regions.
@Suite struct RegionIndexEdgeCaseTests {
    let square = Region(.polygons([Polygon(rings: [TestShapes.rectangle(0, 0, 1, 1)])]))

    @Test func emptyIndexAnswersNothing() {
        let index = RegionIndex(regions: [])
        #expect(index.count == 0)
        #expect(index.regions(containing: Coordinate(latitude: 0, longitude: 0)).isEmpty)
        #expect(index.regions(containing: Coordinate(latitude: .nan, longitude: 0)).isEmpty)
        #expect(index.regions(containing: Coordinate(latitude: 0, longitude: 180)).isEmpty)
    }

    @Test func singleSquare() {
        let index = RegionIndex(regions: [square])
        #expect(index.regions(containing: Coordinate(latitude: 0.5, longitude: 0.5)) == [0])
        #expect(index.regions(containing: Coordinate(latitude: 0, longitude: 0)) == [0])  // corner
        #expect(index.regions(containing: Coordinate(latitude: 1, longitude: 0.25)) == [0])  // edge
        #expect(index.regions(containing: Coordinate(latitude: 1.0.nextUp, longitude: 0.25)).isEmpty)
        #expect(index.regions(containing: Coordinate(latitude: 40, longitude: 40)).isEmpty)  // outside all boxes
        #expect(index.statistics.entries > 0)
        #expect(index.estimatedMemoryBytes > 0)
    }

    @Test func nanAndInfinitePointsNeverCrash() {
        var rng = SplitMix64(seed: 7)
        let regions = TestShapes.mixedRegions(count: 20, using: &rng)
        let index = RegionIndex(regions: regions)
        #expect(index.regions(containing: Coordinate(latitude: .nan, longitude: 2)).isEmpty)
        #expect(index.regions(containing: Coordinate(latitude: 46, longitude: .nan)).isEmpty)
        for p in [Coordinate(latitude: .infinity, longitude: 2), Coordinate(latitude: 46, longitude: -.infinity),
                  Coordinate(latitude: 95, longitude: 2), Coordinate(latitude: 46, longitude: 362)] {
            #expect(index.regions(containing: p) == RegionIndexPropertyTests.bruteForce(regions, p))
        }
    }

    @Test func resultBufferIsClearedAndReused() {
        let index = RegionIndex(regions: [square, square])
        var result: [Int32] = [42, 43, 44]
        index.regions(containing: Coordinate(latitude: 0.5, longitude: 0.5), into: &result)
        #expect(result == [0, 1])
        index.regions(containing: Coordinate(latitude: 5, longitude: 5), into: &result)
        #expect(result.isEmpty)
    }

    /// Regions touching or crossing ±180: the meridian is one line, and polygons written past 180
    /// hold points given with the equivalent longitude.
    @Test func antimeridian() {
        let east = Region(.polygons([Polygon(rings: [TestShapes.rectangle(170, -10, 180, 10)])]))
        let west = Region(.polygons([Polygon(rings: [TestShapes.rectangle(-180, -5, -170, 5)])]))
        let past = Region(.polygons([Polygon(rings: [TestShapes.rectangle(175, 20, 190, 30)])]))
        let circle = Region(.circle(center: Coordinate(latitude: 40, longitude: 179.9), radius: 50_000))
        let corridor = Region(.corridor(lines: [[Coordinate(latitude: -30, longitude: 179),
                                                 Coordinate(latitude: -30, longitude: -179)]], radius: 1000))
        let regions = [east, west, past, circle, corridor]
        let index = RegionIndex(regions: regions)
        var points: [Coordinate] = []
        for lat in stride(from: -40.0, through: 45, by: 0.25) {
            for lon in [-180.0, 180, -179.99, 179.99, -175, 185, -185, 178.5, -178.5] {
                points.append(Coordinate(latitude: lat, longitude: lon))
            }
        }
        #expect(index.regions(containing: Coordinate(latitude: 0, longitude: -180)) == [0, 1])
        #expect(index.regions(containing: Coordinate(latitude: 25, longitude: -175)) == [2])
        #expect(index.regions(containing: Coordinate(latitude: -30, longitude: -179.5)) == [4])
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }

    /// Malformed regions are kept and answered by their own test, in ascending order with the rest.
    @Test func malformedRegionsAreTestedExactly() {
        let nanRing = Region(.polygons([Polygon(rings: [[Coordinate(latitude: .nan, longitude: 0),
                                                          Coordinate(latitude: 1, longitude: 1)]])]))
        let negativeBuffer = Region(.circle(center: Coordinate(latitude: 0.5, longitude: 0.5), radius: 5000), buffer: -1)
        let unclosed = Region(.polygons([Polygon(rings: [Array(TestShapes.rectangle(0, 0, 2, 2).dropLast())])]))
        let emptyCorridor = Region(.corridor(lines: [], radius: 10))
        let regions = [square, nanRing, negativeBuffer, unclosed, emptyCorridor, square]
        let index = RegionIndex(regions: regions)
        #expect(index.statistics.alwaysTestedRegions == 3)
        for p in [Coordinate(latitude: 0.5, longitude: 0.5), Coordinate(latitude: 1.5, longitude: 1.5),
                  Coordinate(latitude: 2, longitude: 1), Coordinate(latitude: 0.5, longitude: 0.52)] {
            #expect(index.regions(containing: p) == RegionIndexPropertyTests.bruteForce(regions, p))
        }
    }

    /// A circle around a pole spans every longitude.
    @Test func polarCircle() {
        let regions = [Region(.circle(center: Coordinate(latitude: 89.5, longitude: 10), radius: 200_000))]
        let index = RegionIndex(regions: regions)
        var points: [Coordinate] = []
        for lat in stride(from: 86.0, through: 90, by: 0.125) {
            for lon in stride(from: -179.0, through: 179, by: 7) { points.append(Coordinate(latitude: lat, longitude: lon)) }
        }
        RegionIndexPropertyTests.expectAgreement(regions, index, points)
    }
}
