import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService
import PerimeterSQLite
import Testing
import PerimeterTestSupport

/// A circle feature (a Point with a radius) with optional dwell and group.
func circle(_ id: String, latitude: Double, longitude: Double, radius: Double, dwell: Double? = nil,
            group: String? = nil, extra: [String: JSONValue] = [:]) -> GeoJSON.Feature {
    var properties = extra
    properties["perimeter:radius"] = .double(radius)
    if let dwell { properties["perimeter:dwell"] = .double(dwell) }
    if let group { properties["perimeter:group"] = .string(group) }
    return GeoJSON.Feature(id: .string(id),
                           geometry: .point(GeoJSON.Point(GeoJSON.Position(longitude: longitude, latitude: latitude))),
                           properties: properties)
}

/// A square polygon feature.
func square(_ id: String, latitude: Double, longitude: Double, half: Double) -> GeoJSON.Feature {
    let ring = [(-1.0, -1.0), (1, -1), (1, 1), (-1, 1), (-1, -1)].map {
        GeoJSON.Position(longitude: longitude + $0.0 * half, latitude: latitude + $0.1 * half)
    }
    return GeoJSON.Feature(id: .string(id), geometry: .polygon(GeoJSON.Polygon([ring])), properties: ["name": .string("square \(id)")])
}

/// Random fences and a time-ordered stream of random walks (with a few out-of-order updates).
struct Scenario {
    var features: [GeoJSON.Feature] = []
    var updates: [LocationUpdate] = []

    init(seed: UInt64, fences: Int = 12, devices: Int = 6, updates count: Int = 600) {
        var rng = SplitMix64(seed: seed)
        for i in 0..<fences {
            let lat = 48.0 + Double.random(in: 0...0.05, using: &rng)
            let lon = 2.0 + Double.random(in: 0...0.05, using: &rng)
            if i % 5 == 4 {
                features.append(square("sq\(i)", latitude: lat, longitude: lon, half: 0.006))
            } else {
                features.append(circle("c\(i)", latitude: lat, longitude: lon, radius: Double.random(in: 300...1500, using: &rng),
                                       dwell: i % 3 == 0 ? nil : Double.random(in: 20...200, using: &rng),
                                       group: i % 2 == 0 ? "even" : "odd"))
            }
        }
        var positions = (0..<devices).map { _ in
            (48.0 + Double.random(in: 0...0.05, using: &rng), 2.0 + Double.random(in: 0...0.05, using: &rng))
        }
        var time = 1_750_000_000.0
        for _ in 0..<count {
            let d = Int.random(in: 0..<devices, using: &rng)
            positions[d].0 += Double.random(in: -0.002...0.002, using: &rng)
            positions[d].1 += Double.random(in: -0.002...0.002, using: &rng)
            time += Double.random(in: 0...8, using: &rng).rounded() / 2
            let late = Int.random(in: 0..<50, using: &rng) == 0 ? 30.0 : 0
            updates.append(LocationUpdate(device: DeviceID("dev\(d)"), time: Date(timeIntervalSince1970: time - late),
                                          latitude: positions[d].0, longitude: positions[d].1))
        }
    }

    /// The bare engine's events, processing updates in order and advancing the clock before each (the oracle).
    func engineEvents(defaultDwellTime: Double?) -> [GeofenceEvent] {
        let loader = FenceLoaderHelper.fences(features)
        var engine = DetectionEngine(fences: loader, configuration: .init(defaultDwellTime: defaultDwellTime))
        var events: [GeofenceEvent] = []
        for update in updates {
            engine.advance(to: update.time, into: &events)
            engine.process(update, into: &events)
        }
        return events
    }
}

enum FenceLoaderHelper {
    static func fences(_ features: [GeoJSON.Feature]) -> [Fence] {
        FenceLoader().load(.featureCollection(GeoJSON.FeatureCollection(features))).fences
    }
}

/// The two store implementations, for suites that run against both.
enum StoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case memory, sqlite
    var description: String { rawValue }
}

/// Opens and "restarts" a store of one kind: the in-memory store is reused, the SQLite file reopened.
final class StoreHarness {
    let kind: StoreKind
    let directory: URL
    private var memory = InMemoryGeofencingStore()
    private var sqlite: SQLiteGeofencingStore?

    init(_ kind: StoreKind) {
        self.kind = kind
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("perimeter-service-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        sqlite?.close()
        try? FileManager.default.removeItem(at: directory)
    }

    var path: String { directory.appendingPathComponent("state.sqlite").path }

    /// The store as a freshly started process would see it.
    func open() throws -> any GeofencingStore {
        switch kind {
        case .memory:
            return memory
        case .sqlite:
            sqlite?.close()
            let store = try SQLiteGeofencingStore(path: path)
            sqlite = store
            return store
        }
    }

    /// A configured service on a (re)opened store.
    func service(_ options: GeofencingOptions = GeofencingOptions()) throws -> GeofencingService {
        let service = GeofencingService(store: try open())
        try service.configure(options)
        return service
    }
}

/// Records what observers hear.
final class RecordingObserver: ExtendedGeofencingObserver, @unchecked Sendable {
    private let lock = NSLock()
    private var _events: [GeofencingEvent] = []
    private var _errors: [GeofencingError] = []
    private var _consent: [(DeviceID?, Bool)] = []

    var events: [GeofencingEvent] { lock.withLock { _events } }
    var errors: [GeofencingError] { lock.withLock { _errors } }
    var consent: [(DeviceID?, Bool)] { lock.withLock { _consent } }

    func onEntry(event: GeofencingEvent) { lock.withLock { _events.append(event) } }
    func onDwell(event: GeofencingEvent) { lock.withLock { _events.append(event) } }
    func onExit(event: GeofencingEvent) { lock.withLock { _events.append(event) } }
    func onCross(event: GeofencingEvent) { lock.withLock { _events.append(event) } }
    func onInside(event: GeofencingEvent) { lock.withLock { _events.append(event) } }
    func onError(error: GeofencingError) { lock.withLock { _errors.append(error) } }
    func onUserConsentChanged(isConsentGiven: Bool) {
        lock.withLock { _consent.append((nil, isConsentGiven)) }
    }
    func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool) {
        lock.withLock { _consent.append((device, isConsentGiven)) }
    }
}

func date(_ seconds: Double) -> Date { Date(timeIntervalSince1970: seconds) }

/// Makes the same call on every service of a set that must behave alike (twin services on different
/// stores) and records an issue, naming `context`, unless all returned equal results or all failed with
/// the same error code. Errors other than ``GeofencingError`` end the test.
func expectAlike<T: Equatable>(_ services: [GeofencingService], _ context: String,
                               _ call: (GeofencingService) throws -> T) throws {
    let results = try services.map { service -> Result<T, GeofencingError> in
        do { return .success(try call(service)) } catch let error as GeofencingError { return .failure(error) }
    }
    for other in results.dropFirst() {
        switch (results[0], other) {
        case let (.success(a), .success(b)): #expect(a == b, "\(context): results")
        case let (.failure(a), .failure(b)): #expect(a.code == b.code, "\(context): errors")
        default: Issue.record("\(context): \(results[0]) against \(other)")
        }
    }
}

/// ``expectAlike(_:_:_:)`` for a call that returns nothing.
func expectAlike(_ services: [GeofencingService], _ context: String, _ call: (GeofencingService) throws -> Void) throws {
    try expectAlike(services, context) { service -> Bool in
        try call(service)
        return true
    }
}
