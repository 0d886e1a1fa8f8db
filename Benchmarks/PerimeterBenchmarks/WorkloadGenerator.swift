import Foundation
import PerimeterGeometry

/// Generates the reference workload deterministically, with the shape `../shared/bench/gen_workload.py`
/// describes: star polygons around 60 cities (some with a hole), a few large fractal-ish polygons,
/// multipolygons, circles, and devices walking, cycling and driving with GPS noise over a France-sized
/// region (lon −5…9, lat 42…51). Own implementation with its own random stream: same shape, not the same
/// numbers (use `--workload DIR` to run on the Python generator's output).
public struct WorkloadGenerator: Sendable {
    /// What to generate.
    public struct Parameters: Hashable, Sendable {
        /// Seed of the random stream.
        public var seed: UInt64 = 20_240_601
        /// Polygon fences in all (small + large + multi).
        public var fences = 10_000
        /// Large polygons (1,000–20,000 vertices).
        public var large = 50
        /// Multipolygons (2–6 parts).
        public var multi = 100
        /// Small polygons that get one hole.
        public var holes = 300
        /// Circle fences.
        public var circles = 1_000
        /// Devices.
        public var devices = 1_000
        /// Fixes per device.
        public var fixesPerDevice = 1_000
        /// Mean-radius range of the small polygons, metres (log-uniform).
        public var smallRadius: ClosedRange<Double> = 100...8_000
        /// Vertex-count range of the small polygons.
        public var smallVertices: ClosedRange<Int> = 20...200

        /// The reference sizes (10,000 fences, 1,000 circles, 1,000 devices × 1,000 fixes).
        public init() {}

        /// The reference sizes scaled by `size` (0 < size ≤ 1 shrinks fences, circles and devices; fixes
        /// per device stay 1,000). Every kind keeps at least one member.
        public static func scaled(_ size: Double) -> Parameters {
            var p = Parameters()
            func scale(_ n: Int) -> Int { max(1, Int((Double(n) * size).rounded())) }
            p.large = scale(50); p.multi = scale(100); p.holes = scale(300)
            p.fences = max(scale(10_000), p.large + p.multi + p.holes + 1)
            p.circles = scale(1_000); p.devices = scale(1_000)
            return p
        }
    }

    /// Region of the workload.
    public static let west = -5.0, east = 9.0, south = 42.0, north = 51.0
    /// Metres per degree of latitude (and of longitude at the equator) used by the generator.
    public static let metresPerDegree = 111_320.0

    /// The parameters.
    public var parameters: Parameters

    /// Creates a generator.
    public init(_ parameters: Parameters = Parameters()) { self.parameters = parameters }

    /// Generates the workload.
    /// - Complexity: O(total vertices + devices × fixes).
    public func generate() -> Workload {
        var rng = SplitMix64(seed: parameters.seed)
        let cities = Cities(&rng)
        var fences: [Workload.PolygonFence] = []
        fences.reserveCapacity(parameters.fences)
        let nSmall = parameters.fences - parameters.large - parameters.multi
        var holeFlags = Array(repeating: false, count: max(0, nSmall))
        var order = Array(0..<max(0, nSmall))
        order.shuffle(using: &rng)
        for i in order.prefix(parameters.holes) { holeFlags[i] = true }

        for i in 0..<max(0, nSmall) {
            let c = cities.sampleCentre(&rng, cityProbability: 0.85)
            let n = rng.integer(parameters.smallVertices)
            let r = exp(rng.uniform(log(parameters.smallRadius.lowerBound)...log(parameters.smallRadius.upperBound)))
            let (ring, rMin) = Self.starRing(&rng, centre: c, vertices: n, radius: r,
                                             roughness: rng.uniform(0.05...0.35), harmonics: rng.integer(2...7))
            var rings = [Self.closed(ring, counterClockwise: true)]
            var kind = Workload.PolygonFence.Kind.small
            if holeFlags[i] {
                let (hole, _) = Self.starRing(&rng, centre: c, vertices: max(8, n / 4), radius: rMin * 0.4,
                                              roughness: 0.1, harmonics: 3)
                rings.append(Self.closed(hole, counterClockwise: false))
                kind = .smallHole
            }
            fences.append(.init(kind: kind, polygons: [rings]))
        }
        for _ in 0..<parameters.large {
            let c = cities.sampleCentre(&rng, cityProbability: 0.6)
            let n = Int(exp(rng.uniform(log(1_000)...log(20_000))))
            let r = rng.uniform(10_000...80_000)
            let (ring, _) = Self.starRing(&rng, centre: c, vertices: n, radius: r,
                                          roughness: rng.uniform(0.25...0.5), harmonics: min(n / 4, 400))
            fences.append(.init(kind: .large, polygons: [[Self.closed(ring, counterClockwise: true)]]))
        }
        for _ in 0..<parameters.multi {
            let c = cities.sampleCentre(&rng, cityProbability: 0.85)
            let k = rng.integer(2...6)
            let r = exp(rng.uniform(log(200)...log(3_000)))
            var parts: [[[Coordinate]]] = []
            for j in 0..<k {
                // Part centres on a coarse lattice so that parts never overlap.
                let step = 3.5 * r * 1.6
                let o = Self.metresToDegrees(latitude: c.latitude, dx: Double(j % 3) * step, dy: Double(j / 3) * step)
                let centre = Coordinate(latitude: c.latitude + o.dLat, longitude: c.longitude + o.dLon)
                let (ring, _) = Self.starRing(&rng, centre: centre, vertices: rng.integer(20...200), radius: r,
                                              roughness: 0.2, harmonics: 4)
                parts.append([Self.closed(ring, counterClockwise: true)])
            }
            fences.append(.init(kind: .multi, polygons: parts))
        }

        var circles: [Workload.CircleFence] = []
        for _ in 0..<parameters.circles {
            let c = cities.sampleCentre(&rng, cityProbability: 0.85)
            let r = (exp(rng.uniform(log(50)...log(5_000))) * 10).rounded() / 10
            circles.append(.init(center: Self.rounded(c), radius: r))
        }
        let fixes = DeviceWalks.generate(&rng, cities: cities, devices: parameters.devices,
                                         fixesPerDevice: parameters.fixesPerDevice)
        return Workload(origin: "generated (seed \(parameters.seed))", fences: fences, circles: circles, fixes: fixes)
    }

    // MARK: - Shapes

    /// Degrees of longitude and latitude for a displacement in metres at `latitude`.
    static func metresToDegrees(latitude: Double, dx: Double, dy: Double) -> (dLon: Double, dLat: Double) {
        (dx / (metresPerDegree * cos(latitude * .pi / 180)), dy / metresPerDegree)
    }

    /// A star-shaped (hence simple) ring of `vertices` points around `centre` with mean radius `radius`
    /// metres and a 1/f boundary noise of relative amplitude `roughness`; not closed. Also returns the
    /// smallest radius in metres.
    static func starRing(_ rng: inout SplitMix64, centre: Coordinate, vertices n: Int, radius: Double,
                         roughness: Double, harmonics: Int) -> ([Coordinate], Double) {
        let h = max(1, harmonics)
        var amplitudes = (1...h).map { rng.normal() / Double($0) }
        let norm = max(1e-9, amplitudes.reduce(0) { $0 + $1 * $1 }.squareRoot())
        amplitudes = amplitudes.map { $0 * roughness / norm }
        let phases = (0..<h).map { _ in rng.uniform(0...(2 * .pi)) }
        let rotation = rng.uniform(0...(2 * .pi))
        var ring: [Coordinate] = []
        ring.reserveCapacity(n + 1)
        var rMin = Double.infinity
        let step = 2 * Double.pi / Double(n)
        for i in 0..<n {
            let theta = Double(i) * step + rng.uniform(0...(step * 0.8)) + rotation
            var r = 1.0
            for k in 0..<h { r += amplitudes[k] * sin(Double(k + 1) * theta + phases[k]) }
            r += rng.normal(deviation: roughness * 0.15)
            r = max(r, 0.25) * radius
            rMin = min(rMin, r)
            let d = metresToDegrees(latitude: centre.latitude, dx: r * cos(theta), dy: r * sin(theta))
            ring.append(rounded(Coordinate(latitude: centre.latitude + d.dLat, longitude: centre.longitude + d.dLon)))
        }
        return (ring, rMin)
    }

    /// Closes `ring` and orients it (RFC 7946: exteriors counter-clockwise, holes clockwise).
    static func closed(_ ring: [Coordinate], counterClockwise: Bool) -> [Coordinate] {
        var c = ring
        if let first = ring.first { c.append(first) }
        var area = 0.0
        for i in 0..<max(0, c.count - 1) {
            area += c[i].longitude * c[i + 1].latitude - c[i + 1].longitude * c[i].latitude
        }
        if (area > 0) != counterClockwise { c.reverse() }
        return c
    }

    /// Rounds to 7 decimals (1 cm), as fence files usually are; the value then prints and parses exactly.
    static func rounded(_ c: Coordinate) -> Coordinate {
        Coordinate(latitude: (c.latitude * 1e7).rounded() / 1e7, longitude: (c.longitude * 1e7).rounded() / 1e7)
    }
}

/// 60 city centres with Zipf weights; big cities sprawl more.
struct Cities {
    var centres: [Coordinate] = []
    var cumulative: [Double] = []
    var spread: [Double] = []

    init(_ rng: inout SplitMix64) {
        let n = 60
        for _ in 0..<n {
            centres.append(Coordinate(latitude: rng.uniform((WorkloadGenerator.south + 0.5)...(WorkloadGenerator.north - 0.5)),
                                      longitude: rng.uniform((WorkloadGenerator.west + 0.5)...(WorkloadGenerator.east - 0.5))))
        }
        let weights = (1...n).map { 1 / pow(Double($0), 0.9) }
        let total = weights.reduce(0, +)
        var sum = 0.0
        for w in weights { sum += w / total; cumulative.append(sum) }
        spread = weights.map { 4_000 + 40_000 * ($0 / weights[0]).squareRoot() }
    }

    /// A fence or device centre: near a city with probability `cityProbability`, else anywhere.
    func sampleCentre(_ rng: inout SplitMix64, cityProbability: Double) -> Coordinate {
        var lon: Double, lat: Double
        if rng.uniform(0...1) < cityProbability {
            let c = rng.pick(cumulative: cumulative)
            let d = WorkloadGenerator.metresToDegrees(latitude: centres[c].latitude,
                                                      dx: rng.normal(deviation: spread[c]), dy: rng.normal(deviation: spread[c]))
            lon = centres[c].longitude + d.dLon
            lat = centres[c].latitude + d.dLat
        } else {
            lon = rng.uniform(WorkloadGenerator.west...WorkloadGenerator.east)
            lat = rng.uniform(WorkloadGenerator.south...WorkloadGenerator.north)
        }
        return Coordinate(latitude: min(max(lat, WorkloadGenerator.south), WorkloadGenerator.north),
                          longitude: min(max(lon, WorkloadGenerator.west), WorkloadGenerator.east))
    }
}
