// The geofencing manager of Mapbox's iOS geofencing guide, as a Mapbox user would port it to Perimeter:
// the imports change (MapboxCommon → PerimeterService, Turf → PerimeterGeoJSON), the calls and the
// observer methods keep their names. What Mapbox does for you and Perimeter leaves to the caller —
// feeding location updates — is the one addition: see `locationChanged(_:)`.
import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import Synchronization

/// Configures the geofencing service, monitors a few places in Yellowstone National Park, and logs
/// every entry, dwell and exit it is told about.
public final class Geofencing: GeofencingObserver {
    /// What the observer heard, one line per call, in the order heard.
    public var log: [String] { lines.withLock { $0 } }
    /// The last entry, dwell or exit event.
    public var lastEvent: GeofencingEvent? { last.withLock { $0 } }

    private let geofencing: GeofencingService
    private let lines = Mutex<[String]>([])
    private let last = Mutex<GeofencingEvent?>(nil)

    /// A manager of `service` (by default the process's shared one, as Mapbox's factory gives).
    public init(service: GeofencingService = GeofencingFactory.getOrCreate()) {
        geofencing = service
    }

    /// Configures the service, registers this observer and adds the park's features, in that order;
    /// `completion` hears the first failure, or success once every feature is monitored.
    public func start(options: GeofencingOptions = GeofencingOptions(),
                      completion: @escaping @Sendable (Result<Void, GeofencingError>) -> Void) {
        geofencing.configure(options: options) { [self] result in
            if case .failure(let error) = result { return completion(.failure(error)) }
            geofencing.addObserver(observer: self) { [self] result in
                if case .failure(let error) = result { return completion(.failure(error)) }
                add(Self.yellowstone[...], completion: completion)
            }
        }
    }

    /// Stops listening and forgets the features.
    public func stop(completion: @escaping @Sendable (Result<Void, GeofencingError>) -> Void) {
        geofencing.removeObserver(observer: self) { [self] _ in
            geofencing.clearFeatures(callback: completion)
        }
    }

    /// A new position of `device`. Mapbox's SDK reads the device's location itself; with Perimeter the
    /// app passes it on (and a server passes on many devices' positions).
    public func locationChanged(_ update: LocationUpdate) throws(GeofencingError) {
        try geofencing.process(update)
    }

    private func add(_ features: ArraySlice<GeoJSON.Feature>,
                     completion: @escaping @Sendable (Result<Void, GeofencingError>) -> Void) {
        guard let feature = features.first else { return completion(.success(())) }
        geofencing.addFeature(feature: feature) { [self] result in
            switch result {
            case .success(let identifier): record("monitoring \(identifier)")
            case .failure(let error): return completion(.failure(error))
            }
            add(features.dropFirst(), completion: completion)
        }
    }

    // MARK: GeofencingObserver

    public func onEntry(event: GeofencingEvent) { report("Entered", event) }
    public func onDwell(event: GeofencingEvent) { report("Dwelled in", event) }
    public func onExit(event: GeofencingEvent) { report("Exited", event) }
    public func onError(error: GeofencingError) { record("error: \(error)") }
    public func onUserConsentChanged(isConsentGiven: Bool) { record("user consent: \(isConsentGiven)") }

    private func report(_ verb: String, _ event: GeofencingEvent) {
        last.withLock { $0 = event }
        let id = event.feature.id
        let name = event.feature.properties["name"]?.stringValue
            ?? Self.yellowstone.first { $0.id == id }?.properties["name"]?.stringValue ?? id?.description ?? "?"
        record("\(verb) \(name) at \(ISO8601DateFormatter().string(from: event.timestamp))")
    }

    private func record(_ line: String) {
        print("geofencing: \(line)")
        lines.withLock { $0.append(line) }
    }

    // MARK: The park

    /// Old Faithful (a Point with its own radius and a dwell time of one minute, in Mapbox's keys),
    /// Grand Prismatic Spring (a Point with no radius: it gets the default radius, 300 m) and a rough
    /// outline of Yellowstone Lake.
    public static let yellowstone: [GeoJSON.Feature] = {
        let text = """
        {"type": "FeatureCollection", "features": [
          {"type": "Feature", "id": "old-faithful",
           "properties": {"name": "Old Faithful", "MBX_GEOFENCE_POINT_RADIUS": 400, "MBX_GEOFENCE_DWELL_TIME": 1},
           "geometry": {"type": "Point", "coordinates": [-110.8281, 44.4605]}},
          {"type": "Feature", "id": "grand-prismatic", "properties": {"name": "Grand Prismatic Spring"},
           "geometry": {"type": "Point", "coordinates": [-110.8382, 44.5251]}},
          {"type": "Feature", "id": "yellowstone-lake", "properties": {"name": "Yellowstone Lake"},
           "geometry": {"type": "Polygon", "coordinates": [[[-110.50, 44.30], [-110.25, 44.30], [-110.25, 44.55],
                                                            [-110.50, 44.55], [-110.50, 44.30]]]}}
        ]}
        """
        guard case .featureCollection(let park)? = GeoJSONReader().read(Array(text.utf8)).object else { return [] }
        return park.features
    }()
}
