import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService

/// A square polygon fence of half-size `half` degrees, optionally in a group.
func square(_ id: String, latitude: Double, longitude: Double, half: Double = 0.01, group: String? = nil) -> GeoJSON.Feature {
    let ring = [(-1.0, -1.0), (1, -1), (1, 1), (-1, 1), (-1, -1)].map {
        GeoJSON.Position(longitude: longitude + $0.0 * half, latitude: latitude + $0.1 * half)
    }
    var properties: [String: JSONValue] = ["name": .string("Square \(id)")]
    if let group { properties["perimeter:group"] = .string(group) }
    return GeoJSON.Feature(id: .string(id), geometry: .polygon(GeoJSON.Polygon([ring])), properties: properties)
}

/// A configured service with two fences: `a` (group "north") at (10, 10) and `b` (group "south") at (20, 20).
func makeService(store: any GeofencingStore = InMemoryGeofencingStore()) throws -> GeofencingService {
    let service = GeofencingService(store: store)
    try service.configure(GeofencingOptions())
    if (try? service.feature(id: "a")) == nil {
        try service.addFeatures([square("a", latitude: 10, longitude: 10, group: "north"),
                                 square("b", latitude: 20, longitude: 20, group: "south")])
    }
    return service
}

/// Moves `device` in and out of fence `a` `visits` times, starting at `start` seconds; returns the events.
@discardableResult
func drive(_ service: GeofencingService, device: String, visits: Int, start: Double) throws -> [GeofencingEvent] {
    var events: [GeofencingEvent] = []
    var time = start
    for _ in 0..<visits {
        for (lat, lon) in [(10.0, 10.0), (15.0, 15.0)] {
            events += try service.process(LocationUpdate(device: DeviceID(device), time: Date(timeIntervalSince1970: time),
                                                         latitude: lat, longitude: lon))
            time += 60
        }
    }
    return events
}

/// Polls `condition` every 10 ms until it holds or `seconds` pass (a bound against hangs, not a timing assertion).
func eventually(_ seconds: Double = 20, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return try condition()
}

/// A `Sendable` box for a mutable value shared with closures.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
    var current: Value { withLock { $0 } }
}
