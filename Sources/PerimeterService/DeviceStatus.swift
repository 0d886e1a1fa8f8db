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

    /// Creates a status.
    public init(device: DeviceID, lastUpdateTime: Date?, presence: [Presence], isConsentGiven: Bool) {
        self.device = device
        self.lastUpdateTime = lastUpdateTime
        self.presence = presence
        self.isConsentGiven = isConsentGiven
    }
}
