import Foundation
import PerimeterEngine

/// What a ``GeofencingService`` knows about one device.
public struct DeviceStatus: Hashable, Sendable {
    /// The device.
    public var device: DeviceID
    /// The time of its last accepted update, or `nil` when none was accepted.
    public var lastUpdateTime: Date?
    /// The fences it is inside, ordered by fence id.
    public var presence: [Presence]
    /// Whether its updates would be processed now (service-wide and device consent).
    public var isConsentGiven: Bool
    /// Whether the status is derived from the events the service logged rather than read from an engine
    /// (a service with a ``DetectionRelay``): presence as the events say, `lastUpdateTime` the latest
    /// update the service relayed or event it logged for the device.
    public var isDerivedFromEvents: Bool

    /// Creates a status.
    public init(device: DeviceID, lastUpdateTime: Date?, presence: [Presence], isConsentGiven: Bool,
                isDerivedFromEvents: Bool = false) {
        self.isDerivedFromEvents = isDerivedFromEvents
        self.device = device
        self.lastUpdateTime = lastUpdateTime
        self.presence = presence
        self.isConsentGiven = isConsentGiven
    }
}
