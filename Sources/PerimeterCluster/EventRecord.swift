import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterNATS

/// A ``PerimeterEngine/GeofenceEvent`` as the events stream stores it: JSON, published with the event id
/// as the message id (so a takeover's replay stores each event once).
public enum EventRecord {
    /// The message for `event` of `partition`.
    public static func message(_ event: GeofenceEvent, partition: Int, in layout: ClusterLayout) -> OutgoingMessage {
        let wire = Wire(id: event.id, visit: event.visitID, kind: event.kind.rawValue, fence: event.fence.rawValue,
                        device: event.device.rawValue, t: event.time.timeIntervalSince1970, lat: event.coordinate.latitude,
                        lon: event.coordinate.longitude, inside: event.timeInside, observed: event.observedAt.timeIntervalSince1970,
                        reason: event.reason.rawValue)
        let payload = Array((try? JSONEncoder().encode(wire)) ?? Data())
        return OutgoingMessage(subject: layout.eventSubject(partition), payload: payload, options: PublishOptions(messageID: event.id))
    }

    /// The event a stored message holds, or `nil` when it holds none.
    public static func event(_ message: StreamMessage) -> GeofenceEvent? {
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(message.payload)),
              let kind = GeofenceEventKind(rawValue: wire.kind), let reason = ExitReason(rawValue: wire.reason) else { return nil }
        return GeofenceEvent(id: wire.id, visitID: wire.visit, kind: kind, fence: FenceID(wire.fence), device: DeviceID(wire.device),
                             time: Date(timeIntervalSince1970: wire.t), coordinate: Coordinate(latitude: wire.lat, longitude: wire.lon),
                             timeInside: wire.inside, observedAt: Date(timeIntervalSince1970: wire.observed), reason: reason)
    }

    private struct Wire: Codable {
        var id: String
        var visit: String
        var kind: String
        var fence: String
        var device: String
        var t: Double
        var lat: Double
        var lon: Double
        var inside: Double?
        var observed: Double
        var reason: String
    }
}
