import PerimeterEngine
import PerimeterFences
import PerimeterService

/// Which events a stream client wants: each non-empty set must contain the event's value
/// (query parameters `device`, `fence`, `group`, `type`, each comma-separated or repeated), whether
/// it also wants device positions (`locations=true`), and whether events carry their fence's properties
/// (`properties`).
public struct EventFilter: Hashable, Sendable {
    /// Device ids, or empty for all.
    public var devices: Set<String>
    /// Fence ids, or empty for all.
    public var fences: Set<String>
    /// Fence groups, or empty for all.
    public var groups: Set<String>
    /// Event types (`entry`, `dwell`, `exit` …), or empty for all.
    public var types: Set<String>
    /// Whether the client also receives `event: location` messages (the positions of accepted
    /// updates, throttled per device). Only ``devices`` applies to them.
    public var locations: Bool
    /// Whether the client's events carry their fence's `properties`.
    public var properties: Bool

    /// Creates a filter; empty sets match everything; no positions unless `locations`; properties
    /// unless `properties` is false.
    public init(devices: Set<String> = [], fences: Set<String> = [], groups: Set<String> = [], types: Set<String> = [],
                locations: Bool = false, properties: Bool = true) {
        self.devices = devices
        self.fences = fences
        self.groups = groups
        self.types = types
        self.locations = locations
        self.properties = properties
    }

    /// Whether `logged` passes (its group is the one its fence had when it was logged).
    public func matches(_ logged: GeofencingEvent) -> Bool {
        let event = logged.event
        if !devices.isEmpty && !devices.contains(event.device.rawValue) { return false }
        if !fences.isEmpty && !fences.contains(event.fence.rawValue) { return false }
        if !types.isEmpty && !types.contains(event.kind.rawValue) { return false }
        if !groups.isEmpty {
            guard let group = logged.group, groups.contains(group) else { return false }
        }
        return true
    }
}
