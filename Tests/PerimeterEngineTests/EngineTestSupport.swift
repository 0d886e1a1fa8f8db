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

