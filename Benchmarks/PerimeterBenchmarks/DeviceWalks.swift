import Foundation
import PerimeterGeometry

/// Device trajectories: random walks with a persistent heading, a speed by mode (walking 1.4 m/s,
/// cycling 5 m/s, driving 14 m/s), 1–10 s between fixes, occasional stops, reflection at the region's
/// edge and about 5 m of GPS noise. The stream is sorted by time (stable).
enum DeviceWalks {
    static func generate(_ rng: inout SplitMix64, cities: Cities, devices: Int, fixesPerDevice: Int) -> Workload.Fixes {
        let total = devices * fixesPerDevice
        var dev = [UInt32](repeating: 0, count: total)
        var time = [Double](repeating: 0, count: total)
        var lon = [Double](repeating: 0, count: total)
        var lat = [Double](repeating: 0, count: total)
        let modeSpeed = [1.4, 5.0, 14.0]
        let modeCumulative = [0.3, 0.5, 1.0]
        for d in 0..<devices {
            let mode = rng.pick(cumulative: modeCumulative)
            let vMean = modeSpeed[mode] * rng.uniform(0.7...1.5)
            let dtMean = rng.uniform(1...10)
            let start = cities.sampleCentre(&rng, cityProbability: 0.9)
            var x = start.longitude, y = start.latitude
            var heading = rng.uniform(0...(2 * .pi))
            var t = 1_700_000_000.0 + rng.uniform(0...60)
            for j in 0..<fixesPerDevice {
                let dt = max(0.5, rng.normal(mean: dtMean, deviation: dtMean * 0.1))
                heading += rng.normal(deviation: 0.25)
                var v = max(0, rng.normal(mean: vMean, deviation: vMean * 0.2))
                if rng.uniform(0...1) < 0.05 { v = 0 }
                let step = WorkloadGenerator.metresToDegrees(latitude: y, dx: v * dt * cos(heading), dy: v * dt * sin(heading))
                x += step.dLon; y += step.dLat
                if x < WorkloadGenerator.west || x > WorkloadGenerator.east { x -= 2 * step.dLon; heading += .pi }
                if y < WorkloadGenerator.south || y > WorkloadGenerator.north { y -= 2 * step.dLat; heading += .pi }
                t += dt
                let noise = WorkloadGenerator.metresToDegrees(latitude: y, dx: rng.normal(deviation: 5), dy: rng.normal(deviation: 5))
                let k = d * fixesPerDevice + j
                dev[k] = UInt32(d); time[k] = t; lon[k] = x + noise.dLon; lat[k] = y + noise.dLat
            }
        }
        // Stream order: by time, ties by generation order (stable).
        let order = (0..<total).sorted { time[$0] < time[$1] || (time[$0] == time[$1] && $0 < $1) }
        var fixes = Workload.Fixes()
        fixes.device = order.map { dev[$0] }
        fixes.time = order.map { time[$0] }
        fixes.longitude = order.map { lon[$0] }
        fixes.latitude = order.map { lat[$0] }
        return fixes
    }
}
