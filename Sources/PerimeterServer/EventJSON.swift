import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterService

/// The one JSON shape of an event, shared by the REST API, the SSE stream and webhooks:
/// `{"sequence","id","visitId","type","fenceId","deviceId","time","observedAt","latitude","longitude",
/// "timeInside"?,"reason"?,"fenceName"?,"group"?}`. Times are RFC 3339 (UTC, milliseconds);
/// `reason` is present on exits only, `timeInside` (seconds) on dwells and exits.
public enum EventJSON {
    /// The JSON object of `logged`; `fence` (when still monitored) supplies `fenceName` and `group`.
    public static func value(_ logged: GeofencingEvent, fence: Fence? = nil) -> JSONValue {
        let event = logged.event
        var object: [String: JSONValue] = [
            "sequence": .integer(logged.sequence),
            "id": .string(event.id),
            "visitId": .string(event.visitID),
            "type": .string(event.kind.rawValue),
            "fenceId": .string(event.fence.rawValue),
            "deviceId": .string(event.device.rawValue),
            "time": .string(RFC3339.string(from: event.time)),
            "observedAt": .string(RFC3339.string(from: event.observedAt)),
            "latitude": .double(event.coordinate.latitude),
            "longitude": .double(event.coordinate.longitude),
        ]
        if let timeInside = event.timeInside, timeInside.isFinite { object["timeInside"] = .double(timeInside) }
        if event.kind == .exit { object["reason"] = .string(event.reason.rawValue) }
        if let name = fence?.name { object["fenceName"] = .string(name) }
        if let group = fence?.group { object["group"] = .string(group) }
        return .object(object)
    }

    /// The event as compact JSON bytes (keys sorted): ``JSONWriter``'s text of ``value(_:fence:)``.
    public static func bytes(_ logged: GeofencingEvent, fence: Fence? = nil) -> [UInt8] {
        var output: [UInt8] = []
        write(logged, fenceName: fence?.name, group: fence?.group, into: &output)
        return output
    }

    /// Appends the event's compact JSON to `output`, byte for byte what ``JSONWriter`` writes for
    /// ``value(_:fence:)`` of a fence with `fenceName` and `group`, without building the ``JSONValue``.
    /// - Complexity: O(size of the event's text).
    public static func write(_ logged: GeofencingEvent, fenceName: String?, group: String?, into output: inout [UInt8]) {
        let event = logged.event
        // Members in JSONWriter's order: names sorted by their UTF-8 bytes.
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
        name(",\"id\":")
        JSONWriter.appendString(event.id, to: &output)
        name(",\"latitude\":")
        JSONWriter.appendDouble(event.coordinate.latitude, to: &output)
        name(",\"longitude\":")
        JSONWriter.appendDouble(event.coordinate.longitude, to: &output)
        name(",\"observedAt\":\"")
        RFC3339.append(event.observedAt, to: &output)
        if event.kind == .exit {
            name("\",\"reason\":")
            JSONWriter.appendString(event.reason.rawValue, to: &output)
            name(",\"sequence\":")
        } else {
            name("\",\"sequence\":")
        }
        JSONWriter.appendInteger(logged.sequence, to: &output)
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
        JSONWriter.appendString(event.visitID, to: &output)
        output.append(UInt8(ascii: "}"))
    }
}
