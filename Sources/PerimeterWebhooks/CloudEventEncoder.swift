import Foundation
import PerimeterGeoJSON
import PerimeterService

/// Builds the webhook request: a CloudEvents 1.0 structured-mode JSON body and its headers.
///
/// Body: `{"specversion":"1.0","id":<event id>,"source":<source>,"type":"perimeter.geofence.<kind>",
/// "subject":<device id>,"time":<event time>,"datacontenttype":"application/json","data":<event JSON>}`.
/// Headers: `Content-Type: application/cloudevents+json`, `Idempotency-Key: <event id>`,
/// `Perimeter-Signature: t=<unix>,v1=<hex HMAC>`, `Perimeter-Webhook-Id`, `Perimeter-Event-Sequence`.
public struct CloudEventEncoder: Sendable {
    /// The CloudEvents `source` attribute (a URI reference naming this server).
    public var source: String
    /// Whether `data` carries the fence's `properties`.
    public var properties: Bool

    /// Creates an encoder.
    public init(source: String = "/perimeter", properties: Bool = true) {
        self.source = source
        self.properties = properties
    }

    /// The CloudEvents type of an event kind: `perimeter.geofence.entry`, `.dwell`, `.exit`, ….
    public static func type(of logged: GeofencingEvent) -> String { "perimeter.geofence.\(logged.event.kind.rawValue)" }

    /// The body bytes (deterministic: members sorted by name, as ``JSONWriter`` writes the object);
    /// `data` is the event's JSON (``GeofencingEvent/writeJSON(into:properties:)``).
    public func body(for logged: GeofencingEvent) -> [UInt8] {
        var bytes = Array(#"{"data":"#.utf8)
        bytes.reserveCapacity(512)
        logged.writeJSON(into: &bytes, properties: properties)
        bytes.append(contentsOf: #","datacontenttype":"application/json","id":"#.utf8)
        JSONWriter.appendString(logged.event.id, to: &bytes)
        bytes.append(contentsOf: #","source":"#.utf8)
        JSONWriter.appendString(source, to: &bytes)
        bytes.append(contentsOf: #","specversion":"1.0","subject":"#.utf8)
        JSONWriter.appendString(logged.event.device.rawValue, to: &bytes)
        bytes.append(contentsOf: #","time":""#.utf8)
        RFC3339.append(logged.event.time, to: &bytes)
        bytes.append(contentsOf: #"","type":"#.utf8)
        JSONWriter.appendString(Self.type(of: logged), to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The request headers for `body`, signed with `secret` at `now`.
    public func headers(for logged: GeofencingEvent, body: [UInt8], webhookID: String, secret: String,
                        now: Date) -> [(String, String)] {
        let signature = WebhookSignature(body: body, secret: secret, timestamp: Int64(now.timeIntervalSince1970.rounded(.down)))
        return [
            ("Content-Type", "application/cloudevents+json"),
            ("Idempotency-Key", logged.event.id),
            (WebhookSignature.headerName, signature.headerValue),
            ("Perimeter-Webhook-Id", webhookID),
            ("Perimeter-Event-Sequence", String(logged.sequence)),
        ]
    }
}
