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
    public static func value(_ logged: LoggedEvent, fence: Fence? = nil) -> JSONValue {
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

    /// The event as compact JSON bytes (keys sorted).
    public static func bytes(_ logged: LoggedEvent, fence: Fence? = nil) -> [UInt8] {
        var output: [UInt8] = []
        JSONWriter().write(value(logged, fence: fence), into: &output)
        return output
    }
}
