import Foundation
import PerimeterGeoJSON
import PerimeterGeometry

/// An area that devices enter, dwell in and exit, with what it should report and how.
///
/// A fence is usually made from a GeoJSON Feature by ``FenceLoader``: the geometry becomes the
/// ``region`` and the feature's properties configure the rest (see docs/fences.md for every key).
public struct Fence: Sendable {
    /// The fence's id (the feature's `id`).
    public var id: FenceID
    /// The area the fence covers.
    public var region: Region
    /// A human name (the `name` property), used in messages and drawings.
    public var name: String?
    /// How long a device must stay inside before a dwell event, in seconds; `nil` for no dwell.
    public var dwellTime: Double?
    /// The events this fence emits; the others are tracked but not reported.
    public var events: GeofenceEventKinds
    /// A group the fence belongs to (for bulk removal and filtering), if any.
    public var group: String?
    /// The template that renders a message for this fence's events, if any.
    public var message: MessageTemplate?
    /// After this moment the fence is no longer reported on, if set.
    public var expiresAt: Date?
    /// The feature's properties as given, for consumers.
    public var properties: [String: JSONValue]
    /// Detection-quality options for this fence; unset fields follow the engine (docs/semantics.md).
    public var options: DetectionOptions

    /// Creates a fence.
    public init(id: FenceID, region: Region, name: String? = nil, dwellTime: Double? = nil,
                events: GeofenceEventKinds = .all, group: String? = nil, message: MessageTemplate? = nil,
                expiresAt: Date? = nil, properties: [String: JSONValue] = [:],
                options: DetectionOptions = DetectionOptions()) {
        self.id = id
        self.region = region
        self.name = name
        self.dwellTime = dwellTime
        self.events = events
        self.group = group
        self.message = message
        self.expiresAt = expiresAt
        self.properties = properties
        self.options = options
    }

    /// Whether the fence covers `coordinate` (boundary included).
    ///
    /// - Complexity: O(vertices) for polygons; use a ``FenceSet`` to ask many fences at once.
    @inlinable
    public func contains(_ coordinate: Coordinate) -> Bool { region.contains(coordinate) }

    /// The name if the fence has one, else its id: what people should read.
    public var displayName: String { name ?? id.rawValue }
}
