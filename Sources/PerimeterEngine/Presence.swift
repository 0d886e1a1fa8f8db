import Foundation
import PerimeterFences

/// That a device is inside a fence: since when, in which visit, and whether its dwell has fired.
public struct Presence: Hashable, Sendable {
    /// The fence the device is inside.
    public var fence: FenceID
    /// When the device entered (the time of the update that showed it inside).
    public var since: Date
    /// The visit's id, as carried by its events.
    public var visitID: String
    /// Whether the dwell event of this visit has fired.
    public var hasDwelled: Bool

    public init(fence: FenceID, since: Date, visitID: String, hasDwelled: Bool) {
        self.fence = fence
        self.since = since
        self.visitID = visitID
        self.hasDwelled = hasDwelled
    }
}
