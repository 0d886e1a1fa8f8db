import Foundation
import PerimeterEngine
import PerimeterGeoJSON

extension GeofencingEvent {
    /// Appends the event's JSON object to `output`: the one JSON form of an event, written by the REST
    /// API, the SSE stream, webhook bodies (the CloudEvent's `data`) and `perimeter replay --format ndjson`.
    ///
    /// `{"sequence","id","visitId","type","fenceId","deviceId","time","observedAt","latitude","longitude",
    /// "timeInside"?,"reason"?,"fenceName"?,"group"?,"message"?,"properties"?}`, compact, members sorted
    /// by name (what ``JSONWriter`` writes for the same object). Times are RFC 3339 (UTC, milliseconds);
    /// `timeInside` (seconds) is present on dwells and exits, `reason` on exits; `fenceName`, `group` and
    /// `message` when the fence had them when the event was logged; `properties` (the fence feature's
    /// properties, `{}` when it had none) unless `properties` is false.
    /// - Complexity: O(size of the event's text), plus sorting the properties' keys.
    public func writeJSON(into output: inout [UInt8], properties includeProperties: Bool = true) {
        // Member names with their punctuation, in JSONWriter's order: names sorted by their UTF-8 bytes.
        func name(_ text: StaticString) {
            output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        name("{\"deviceId\":")
        JSONWriter.appendString(event.device.rawValue, to: &output)
        name(",\"fenceId\":")
        JSONWriter.appendString(event.fence.rawValue, to: &output)
        if let fenceName {
            name(",\"fenceName\":")
            JSONWriter.appendString(fenceName, to: &output)
        }
        if let group {
            name(",\"group\":")
            JSONWriter.appendString(group, to: &output)
        }
        // Both ids from one hash of the visit when the event's ids are not made yet (a service whose only
        // reader is its caller leaves them: ServiceCore.log).
        let (id, visitID) = event.idAndVisitID
        name(",\"id\":")
        JSONWriter.appendString(id, to: &output)
        name(",\"latitude\":")
        JSONWriter.appendDouble(event.coordinate.latitude, to: &output)
        name(",\"longitude\":")
        JSONWriter.appendDouble(event.coordinate.longitude, to: &output)
        if let message {
            name(",\"message\":")
            JSONWriter.appendString(message, to: &output)
        }
        name(",\"observedAt\":\"")
        RFC3339.append(event.observedAt, to: &output)
        name("\"")
        if includeProperties {
            name(",\"properties\":")
            JSONWriter().write(.object(properties), into: &output)
        }
        if event.kind == .exit {
            name(",\"reason\":")
            JSONWriter.appendString(event.reason.rawValue, to: &output)
        }
        name(",\"sequence\":")
        JSONWriter.appendInteger(sequence, to: &output)
        name(",\"time\":\"")
        RFC3339.append(event.time, to: &output)
        name("\"")
        if let timeInside = event.timeInside, timeInside.isFinite {
            name(",\"timeInside\":")
            JSONWriter.appendDouble(timeInside, to: &output)
        }
        name(",\"type\":")
        JSONWriter.appendString(event.kind.rawValue, to: &output)
        name(",\"visitId\":")
        JSONWriter.appendString(visitID, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// The event's JSON (``writeJSON(into:properties:)``) as bytes.
    public func json(properties includeProperties: Bool = true) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(320)
        writeJSON(into: &output, properties: includeProperties)
        return output
    }
}
