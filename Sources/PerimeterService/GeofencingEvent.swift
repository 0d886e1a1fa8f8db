import Foundation
import PerimeterEngine
import PerimeterGeoJSON

/// An event as the service reports it: the engine's event, its place in the service's event log (the
/// outbox), and what consumers need of the fence, fixed when the event was logged.
///
/// Sequence numbers start at 1 and increase by one per event, across restarts. The fence's properties
/// and rendered message are copied into the event when it is logged and stored with it, so they stay
/// as they were even when the fence is later edited or removed.
public struct GeofencingEvent: Hashable, Sendable {
    /// Position in the event log (1, 2, 3, …).
    public var sequence: Int64
    /// The event.
    public var event: GeofenceEvent
    /// The fence feature's properties as given when the event was logged (Mapbox's `event.feature`
    /// properties, Esri's fence attributes).
    public var properties: [String: JSONValue]
    /// The fence's `perimeter:message` template rendered for this event, or `nil` when it has none.
    public var message: String?

    /// Creates a logged event.
    public init(sequence: Int64, event: GeofenceEvent, properties: [String: JSONValue] = [:], message: String? = nil) {
        self.sequence = sequence
        self.event = event
        self.properties = properties
        self.message = message
    }

    /// The fence as a GeoJSON Feature, as Mapbox's `GeofencingEvent.feature` gives it: the fence's id
    /// and properties as they were when the event was logged. The geometry is left out (`nil`); ask the
    /// service for the feature by id when it is needed.
    public var feature: GeoJSON.Feature {
        GeoJSON.Feature(id: .string(event.fence.rawValue), geometry: nil, properties: properties)
    }

    /// When the event happened (the event's time; Mapbox's `GeofencingEvent.timestamp`).
    public var timestamp: Date { event.time }
}
