import Foundation
import PerimeterFences
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

    /// Creates an encoder.
    public init(source: String = "/perimeter") {
        self.source = source
    }

    /// The CloudEvents type of an event kind: `perimeter.geofence.entry`, `.dwell`, `.exit`, ….
    public static func type(of logged: GeofencingEvent) -> String { "perimeter.geofence.\(logged.event.kind.rawValue)" }

    /// The body bytes (deterministic: sorted keys); `data` is ``EventJSON`` of the event, with the
    /// fence's name and group when `fence` is given.
    public func body(for logged: GeofencingEvent, fence: Fence? = nil) -> [UInt8] {
        let value: JSONValue = .object([
            "specversion": "1.0", "id": .string(logged.event.id), "source": .string(source),
            "type": .string(Self.type(of: logged)), "subject": .string(logged.event.device.rawValue),
            "time": .string(RFC3339.string(from: logged.event.time)), "datacontenttype": "application/json",
            "data": EventJSON.value(logged, fence: fence),
        ])
        var bytes: [UInt8] = []
        JSONWriter().write(value, into: &bytes)
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
