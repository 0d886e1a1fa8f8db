import PerimeterEngine
import PerimeterFences

/// The one error type of ``GeofencingService``: a ``Code`` to branch on and a message a person can act on.
///
/// The codes cover what Mapbox's geofencing errors cover where they apply to a library (not configured,
/// feature not found, limit exceeded, invalid feature, storage failure, consent missing, inaccurate
/// location, …) plus the engine's own rejections (out-of-order or invalid updates).
public struct GeofencingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public enum Code: String, Hashable, Sendable, CaseIterable {
        /// ``GeofencingService/configure(_:)`` has not been called yet.
        case notConfigured
        /// No feature with the given id is monitored.
        case featureNotFound
        /// No device with the given id is known (it sent no update, or was forgotten).
        case deviceNotFound
        /// Adding would exceed ``GeofencingOptions/maximumMonitoredFeatures``.
        case limitExceeded
        /// A feature cannot become a fence (no id, bad geometry, bad property); see ``GeofencingError/problems``.
        case invalidFeature
        /// An argument is out of range (for example a negative limit in the options).
        case invalidArgument
        /// The store failed to read or write; the message says what the database reported.
        case storageFailure
        /// The store holds data this version cannot use: not a Perimeter database, a newer schema, or
        /// a damaged file. Nothing was changed.
        case incompatibleStorage
        /// The user (service-wide or for this device) has not given consent; nothing was processed or stored.
        case consentMissing
        /// The update's horizontal accuracy is worse than ``GeofencingOptions/maximumHorizontalAccuracy``.
        case inaccurateLocation
        /// The update's position or time is not valid (not finite, latitude beyond ±90°).
        case invalidLocation
        /// The update is older than the device's last accepted update.
        case outOfOrderUpdate
        /// The update is dated further ahead of the service's clock than
        /// ``GeofencingOptions/maximumFutureSkew`` allows (a device with a wrong clock); nothing changed.
        case futureUpdate
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and what to do about it.
    public var message: String
    /// The feature concerned, if any.
    public var featureID: FenceID?
    /// The device concerned, if any.
    public var device: DeviceID?
    /// For ``Code/invalidFeature``: every problem the fence loader found.
    public var problems: [FenceProblem]

    /// Creates an error.
    public init(_ code: Code, _ message: String, featureID: FenceID? = nil, device: DeviceID? = nil,
                problems: [FenceProblem] = []) {
        self.code = code
        self.message = message
        self.featureID = featureID
        self.device = device
        self.problems = problems
    }

    /// `consentMissing: …`
    public var description: String { "\(code.rawValue): \(message)" }
}

extension GeofencingError {
    static let notConfigured = GeofencingError(
        .notConfigured, "the geofencing service is not configured; call configure(_:) before using it")

    static func storage(_ error: any Error, while action: String) -> GeofencingError {
        if let error = error as? GeofencingError { return error }
        return GeofencingError(.storageFailure,
                               "the store failed while \(action): \(error). Changes made in memory are kept and written by the next successful commit; call flush() to retry")
    }

    init(_ rejection: DetectionEngine.Rejection) {
        switch rejection {
        case let .outOfOrder(device, _, _):
            self.init(.outOfOrderUpdate, "\(rejection); send each device's updates in time order", device: device)
        case let .invalidCoordinate(device, _):
            self.init(.invalidLocation, "\(rejection); latitude must be within ±90° and both finite", device: device)
        case let .invalidTime(device, _):
            self.init(.invalidLocation, "\(rejection)", device: device)
        }
    }
}
