import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry

/// A square fence of `size` degrees with its south-west corner at (lat, lon).
func square(_ id: FenceID, lat: Double, lon: Double, size: Double = 1, dwell: Double? = nil,
            events: GeofenceEventKinds = .all, expiresAt: Date? = nil) -> Fence {
    let ring = [
        Coordinate(latitude: lat, longitude: lon), Coordinate(latitude: lat, longitude: lon + size),
        Coordinate(latitude: lat + size, longitude: lon + size), Coordinate(latitude: lat + size, longitude: lon),
        Coordinate(latitude: lat, longitude: lon),
    ]
    return Fence(id: id, region: Region(.polygons([Polygon(rings: [ring])])), dwellTime: dwell, events: events,
                 expiresAt: expiresAt)
}

/// An update of `device` at `t` seconds after 1970 at (lat, lon).
func update(_ device: DeviceID, _ t: Double, _ lat: Double, _ lon: Double) -> LocationUpdate {
    LocationUpdate(device: device, time: Date(timeIntervalSince1970: t), latitude: lat, longitude: lon)
}

/// An update of device `d` at `t` seconds after 1970 at (lat, lon).
func update(_ t: Double, _ lat: Double, _ lon: Double) -> LocationUpdate {
    update("d", t, lat, lon)
}

/// `kind fence @t` for compact comparisons.
func summary(_ events: [GeofenceEvent]) -> [String] {
    events.map { "\($0.kind.rawValue) \($0.fence) @\(Int($0.time.timeIntervalSince1970))" }
}

func summaryWithDevice(_ events: [GeofenceEvent]) -> [String] {
    events.map { "\($0.kind.rawValue) \($0.device) \($0.fence) @\(Int($0.time.timeIntervalSince1970))" }
}

/// SplitMix64: a small, seeded generator so random tests are reproducible.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
