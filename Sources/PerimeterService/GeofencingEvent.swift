import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON

/// An event as the service reports it: the engine's event, its place in the service's event log (the
/// outbox), and what consumers need of the fence, fixed when the event was logged.
///
/// Sequence numbers start at 1 and increase by one per event, across restarts. The fence's name, group,
/// properties and rendered message are copied into the event when it is logged and stored with it, so
/// they stay as they were even when the fence is later edited or removed; nothing reads the fence again
/// to report the event. ``writeJSON(into:properties:)`` is the one JSON form of an event.
public struct GeofencingEvent: Hashable, Sendable {
    /// Position in the event log (1, 2, 3, …). In `perimeter replay` output, the event's position in
    /// the output (as if the replay were a fresh service's log).
    public var sequence: Int64
    /// The event.
    public var event: GeofenceEvent
    /// The fence's name (its `name` property) when the event was logged, if it had one.
    public var fenceName: String?
    /// The fence's group (`perimeter:group`) when the event was logged, if it had one.
    public var group: String?
    /// The fence feature's properties as given when the event was logged (Mapbox's `event.feature`
    /// properties, Esri's fence attributes).
    public var properties: [String: JSONValue]
    /// The fence's `perimeter:message` template rendered for this event, or `nil` when it has none.
    public var message: String?

    /// Creates a logged event.
    public init(sequence: Int64, event: GeofenceEvent, fenceName: String? = nil, group: String? = nil,
                properties: [String: JSONValue] = [:], message: String? = nil) {
        self.sequence = sequence
        self.event = event
        self.fenceName = fenceName
        self.group = group
        self.properties = properties
        self.message = message
    }

    /// Creates the logged form of `event` of `fence`: the fence's name, group and properties as they are
    /// now, and its message template rendered for the event (``renderMessage(for:fence:)``). Without a
    /// fence (it was removed before the event was logged) the event carries none of them.
    public init(sequence: Int64, event: GeofenceEvent, fence: Fence?) {
        self.init(sequence: sequence, event: event, fenceName: fence?.name, group: fence?.group,
                  properties: fence?.properties ?? [:], message: fence.flatMap { Self.renderMessage(for: event, fence: $0) })
    }

    /// ``init(sequence:event:fence:)`` from the fence's ``FenceLabel`` (`nil`: no fence): the same event.
    /// Inlined: called, it built the event in a temporary, copied it out and destroyed the temporary
    /// (every string and dictionary in it retained and released once more).
    @inline(__always)
    init(sequence: Int64, event: GeofenceEvent, label: FenceLabel?) {
        self.sequence = sequence
        self.event = event
        fenceName = label?.name
        group = label?.group
        properties = label?.properties ?? [:]
        message = label?.fenceWithMessage.flatMap { Self.renderMessage(for: event, fence: $0) }
    }

    /// The fence as a GeoJSON Feature, as Mapbox's `GeofencingEvent.feature` gives it: the fence's id
    /// and properties as they were when the event was logged. The geometry is left out (`nil`); ask the
    /// service for the feature by id when it is needed.
    public var feature: GeoJSON.Feature {
        GeoJSON.Feature(id: .string(event.fence.rawValue), geometry: nil, properties: properties)
    }

    /// When the event happened (the event's time; Mapbox's `GeofencingEvent.timestamp`).
    public var timestamp: Date { event.time }

    /// The fence's `perimeter:message` template rendered for `event`, or `nil` when the fence has none.
    ///
    /// Placeholders: `{name}` (the name, else the id), `{id}` or `{fenceId}`, `{event}` or `{type}` (the
    /// event kind), `{device}` or `{deviceId}`, `{time}` (`17:22:23`, UTC), `{timestamp}` (RFC 3339), and
    /// any other property of the fence (strings as they are, other values as JSON); unknown ones render
    /// as empty text.
    public static func renderMessage(for event: GeofenceEvent, fence: Fence) -> String? {
        fence.message?.render { key in
            switch key {
            case "name": fence.displayName
            case "id", "fenceId": fence.id.rawValue
            case "event", "type": event.kind.rawValue
            case "device", "deviceId": event.device.rawValue
            case "time": clock(event.time)
            case "timestamp": RFC3339.string(from: event.time)
            default: fence.properties[key].map { $0.stringValue ?? JSONWriter().string($0) }
            }
        }
    }

    /// `17:22:23`: the time of day of `date` in UTC, to the second.
    public static func clock(_ date: Date) -> String {
        let text = RFC3339.string(from: date)
        // The part after the date's `T` (the date may have more than four year digits, or be invalid).
        guard let t = text.firstIndex(of: "T") else { return text }
        return String(text[text.index(after: t)...].prefix(8))
    }
}
