import Dispatch
import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON

/// What Mapbox's `getFeature` reports: a monitored feature and since when a device is inside it.
public struct GeofenceState: Hashable, Sendable {
    /// The feature, as it was added.
    public var feature: GeoJSON.Feature
    /// When the geofence became active: the entry time of the device asked about, or without one the
    /// earliest entry time of the devices inside now; `nil` when none is inside.
    public var timestamp: Date?

    /// Creates a state.
    public init(feature: GeoJSON.Feature, timestamp: Date?) {
        self.feature = feature
        self.timestamp = timestamp
    }
}

/// The shape of Mapbox's iOS `GeofencingService`: the same method names, labels and result types, each
/// as an `async` method and as a method that reports a `Result` to a callback. Code written for
/// Mapbox's SDK ports with little more than a changed import.
///
/// Both forms run the synchronous methods (``configure(_:)``, ``addFeature(_:)``, ``feature(id:)``,
/// ``removeFeature(id:)``, ``clearFeatures()``, ``options``) on one serial queue per service, so calls
/// take effect in the order they were made and never block the caller (a commit may write to disk).
/// Callbacks are called on that queue, once, after the call's observers were notified.
extension GeofencingService {
    // MARK: async

    /// Applies `options` (Mapbox's `configure(options:)`); see ``configure(_:)``.
    public func configure(options: GeofencingOptions) async throws(GeofencingError) {
        try await performed { (service) throws(GeofencingError) in try service.configure(options) }
    }

    /// The options in use (Mapbox's `getOptions`).
    /// - Throws: ``GeofencingError/Code/notConfigured`` before ``configure(_:)``.
    public func getOptions() async throws(GeofencingError) -> GeofencingOptions {
        try await performed { (service) throws(GeofencingError) in try service.currentOptions() }
    }

    /// Starts monitoring `feature`, or replaces the one with its id (Mapbox's `addFeature(feature:)`);
    /// see ``addFeature(_:)``.
    /// - Returns: the feature's identifier.
    public func addFeature(feature: GeoJSON.Feature) async throws(GeofencingError) -> String {
        try await performed { (service) throws(GeofencingError) in try service.addFeatureReturningIdentifier(feature) }
    }

    /// The monitored feature with `identifier` and since when `device` (any device when `nil`) is inside
    /// it (Mapbox's `getFeature(identifier:)`).
    /// - Throws: ``GeofencingError/Code/featureNotFound``.
    /// - Complexity: O(devices) without `device`.
    public func getFeature(identifier: String, device: DeviceID? = nil) async throws(GeofencingError) -> GeofenceState {
        try await performed { (service) throws(GeofencingError) in try service.state(of: FenceID(identifier), device: device) }
    }

    /// Stops monitoring the feature with `identifier` (Mapbox's `removeFeature(identifier:)`); see
    /// ``removeFeature(id:)``.
    /// - Returns: the identifier.
    /// - Throws: ``GeofencingError/Code/featureNotFound``.
    public func removeFeature(identifier: String) async throws(GeofencingError) -> String {
        try await performed { (service) throws(GeofencingError) in
            try service.removeFeature(id: FenceID(identifier))
            return identifier
        }
    }

    /// Stops monitoring every feature (Mapbox's `clearFeatures`); in a synchronous context the
    /// synchronous ``clearFeatures()`` is called instead.
    public func clearFeatures() async throws(GeofencingError) {
        try await performed { (service) throws(GeofencingError) in try service.clearFeatures() }
    }

    /// Registers `observer` (Mapbox's `addObserver(observer:)`); see ``addObserver(_:)``. Never fails.
    public func addObserver(observer: any GeofencingObserver) async {
        await performed { service in service.addObserver(observer) }
    }

    /// Unregisters `observer` (Mapbox's `removeObserver(observer:)`). Never fails.
    public func removeObserver(observer: any GeofencingObserver) async {
        await performed { service in service.removeObserver(observer) }
    }

    // MARK: Callbacks

    /// Applies `options`, then calls `callback` with the outcome.
    public func configure(options: GeofencingOptions,
                          callback: @escaping @Sendable (Result<Void, GeofencingError>) -> Void) {
        perform(callback) { (service) throws(GeofencingError) in try service.configure(options) }
    }

    /// Calls `callback` with the options in use (``GeofencingError/Code/notConfigured`` before
    /// ``configure(_:)``).
    public func getOptions(callback: @escaping @Sendable (Result<GeofencingOptions, GeofencingError>) -> Void) {
        perform(callback) { (service) throws(GeofencingError) in try service.currentOptions() }
    }

    /// Adds or replaces `feature`, then calls `callback` with its identifier or the error.
    public func addFeature(feature: GeoJSON.Feature,
                           callback: @escaping @Sendable (Result<String, GeofencingError>) -> Void) {
        perform(callback) { (service) throws(GeofencingError) in try service.addFeatureReturningIdentifier(feature) }
    }

    /// Calls `callback` with the feature with `identifier` and since when `device` (any device when
    /// `nil`) is inside it, or ``GeofencingError/Code/featureNotFound``.
    public func getFeature(identifier: String, device: DeviceID? = nil,
                           callback: @escaping @Sendable (Result<GeofenceState, GeofencingError>) -> Void) {
        perform(callback) { (service) throws(GeofencingError) in try service.state(of: FenceID(identifier), device: device) }
    }

    /// Removes the feature with `identifier`, then calls `callback` with the identifier or the error.
    public func removeFeature(identifier: String,
                              callback: @escaping @Sendable (Result<String, GeofencingError>) -> Void) {
        perform(callback) { (service) throws(GeofencingError) in
            try service.removeFeature(id: FenceID(identifier))
            return identifier
        }
    }

    /// Removes every feature, then calls `callback` with the outcome.
    public func clearFeatures(callback: @escaping @Sendable (Result<Void, GeofencingError>) -> Void) {
        perform(callback) { (service) throws(GeofencingError) in try service.clearFeatures() }
    }

    /// Registers `observer`, then calls `callback` (always with success).
    public func addObserver(observer: any GeofencingObserver,
                            callback: @escaping @Sendable (Result<Void, GeofencingError>) -> Void) {
        perform(callback) { service in service.addObserver(observer) }
    }

    /// Unregisters `observer`, then calls `callback` (always with success).
    public func removeObserver(observer: any GeofencingObserver,
                               callback: @escaping @Sendable (Result<Void, GeofencingError>) -> Void) {
        perform(callback) { service in service.removeObserver(observer) }
    }

    // MARK: The one implementation

    /// Runs `work` on the call queue and reports its outcome to `callback` there.
    private func perform<Value: Sendable>(_ callback: @escaping @Sendable (Result<Value, GeofencingError>) -> Void,
                                          _ work: @escaping @Sendable (GeofencingService) throws(GeofencingError) -> Value) {
        mapboxCalls.async {
            let result: Result<Value, GeofencingError>
            do throws(GeofencingError) {
                result = .success(try work(self))
            } catch {
                result = .failure(error)
            }
            callback(result)
        }
    }

    /// Runs `work` on the call queue and returns its outcome.
    private func performed<Value: Sendable>(
        _ work: @escaping @Sendable (GeofencingService) throws(GeofencingError) -> Value
    ) async throws(GeofencingError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, GeofencingError>, Never>) in
            perform({ continuation.resume(returning: $0) }, work)
        }
        return try result.get()
    }

    /// Runs `work`, which cannot fail, on the call queue.
    private func performed(_ work: @escaping @Sendable (GeofencingService) -> Void) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            mapboxCalls.async {
                work(self)
                continuation.resume()
            }
        }
    }

    private func currentOptions() throws(GeofencingError) -> GeofencingOptions {
        guard let options else { throw GeofencingError.notConfigured }
        return options
    }

    private func addFeatureReturningIdentifier(_ feature: GeoJSON.Feature) throws(GeofencingError) -> String {
        try addFeature(feature)
        // addFeature refuses a feature without an id.
        return feature.id.map { FenceID($0.description).rawValue } ?? ""
    }

    private func state(of id: FenceID, device: DeviceID?) throws(GeofencingError) -> GeofenceState {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> GeofenceState in
            _ = try c.configured()
            guard let feature = c.features[id] else { throw Self.notFound(id) }
            let devices = device.map { [$0] } ?? c.engine.knownDevices
            let since = devices.compactMap { d in c.engine.presence(of: d).first { $0.fence == id }?.since }.min()
            return GeofenceState(feature: feature, timestamp: since)
        }
    }
}

/// Where Mapbox's SDK hands out its geofencing service: `GeofencingFactory.getOrCreate()`.
public enum GeofencingFactory {
    private static let shared = GeofencingService()

    /// The process's shared service, on an in-memory store. A service of your own
    /// (`GeofencingService(store:)`, for example on an `SQLiteGeofencingStore`) keeps its state across
    /// restarts.
    public static func getOrCreate() -> GeofencingService { shared }
}
