import PerimeterEngine
import PerimeterFences

/// Which events a webhook receives: every non-empty criterion must match (an empty one matches all).
public struct WebhookFilter: Hashable, Sendable {
    /// Only events of these devices (empty: every device).
    public var devices: Set<String>
    /// Only events of these fences (empty: every fence).
    public var fences: Set<String>
    /// Only events of fences in these groups (empty: every group, and fences without a group).
    public var groups: Set<String>
    /// Only these kinds (empty: every kind).
    public var types: Set<GeofenceEventKind>

    /// A filter; the default matches every event.
    public init(devices: Set<String> = [], fences: Set<String> = [], groups: Set<String> = [],
                types: Set<GeofenceEventKind> = []) {
        self.devices = devices
        self.fences = fences
        self.groups = groups
        self.types = types
    }

    /// Whether `event`, of a fence in `group` (the logged event's ``GeofencingEvent/group``), passes the filter.
    /// - Complexity: O(1) expected.
    public func matches(_ event: GeofenceEvent, group: String?) -> Bool {
        if !devices.isEmpty && !devices.contains(event.device.rawValue) { return false }
        if !fences.isEmpty && !fences.contains(event.fence.rawValue) { return false }
        if !types.isEmpty && !types.contains(event.kind) { return false }
        if !groups.isEmpty {
            guard let group, groups.contains(group) else { return false }
        }
        return true
    }
}
