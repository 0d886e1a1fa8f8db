import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON

/// Renders events for people (`text`) or programs (`ndjson`).
struct EventFormatter {
    enum Format: String, CaseIterable {
        case text, ndjson
    }

    let format: Format
    let fences: FenceSet
    /// Whether more than one device is replayed (text lines then name the device).
    let manyDevices: Bool

    /// One line (without newline) for `event`.
    func line(for event: GeofenceEvent) -> String {
        let fence = fences.fence(id: event.fence)
        switch format {
        case .text:
            var text = Self.sentence(for: event, fence: fence)
            if let fence, let message = message(for: event, fence: fence) {
                // A template that does not say when gets the time appended, like the default sentence.
                let placeholders = fence.message?.placeholders ?? []
                text = placeholders.contains("time") || placeholders.contains("timestamp")
                    ? message : "\(message) at \(Self.clock(event.time))"
            }
            return manyDevices ? "\(event.device): \(text)" : text
        case .ndjson:
            return JSONWriter().string(json(for: event, fence: fence))
        }
    }

    /// `Entered Firehole River at 17:22:23`, the Mapbox tutorial's banner.
    static func sentence(for event: GeofenceEvent, fence: Fence?) -> String {
        let name = fence?.displayName ?? event.fence.rawValue
        let clock = Self.clock(event.time)
        switch event.kind {
        case .entry: return "Entered \(name) at \(clock)"
        case .dwell: return "Dwelled in \(name) at \(clock)"
        case .exit:
            let inside = event.timeInside.map { " after \(Self.duration($0))" } ?? ""
            let timeout = event.reason == .timeout ? " (timed out)" : ""
            return "Exited \(name) at \(clock)\(inside)\(timeout)"
        case .cross: return "Crossed \(name) at \(clock)"
        case .inside: return "Inside \(name) at \(clock)"
        }
    }

    /// The fence's message template rendered for `event`, if the fence has one.
    func message(for event: GeofenceEvent, fence: Fence) -> String? {
        fence.message?.render { key in
            switch key {
            case "name": fence.displayName
            case "id", "fenceId": fence.id.rawValue
            case "event", "type": event.kind.rawValue
            case "device", "deviceId": event.device.rawValue
            case "time": Self.clock(event.time)
            case "timestamp": RFC3339.string(from: event.time)
            default: fence.properties[key].map { $0.stringValue ?? JSONWriter().string($0) }
            }
        }
    }

    func json(for event: GeofenceEvent, fence: Fence?) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(event.id),
            "visitId": .string(event.visitID),
            "type": .string(event.kind.rawValue),
            "fenceId": .string(event.fence.rawValue),
            "deviceId": .string(event.device.rawValue),
            "time": .string(RFC3339.string(from: event.time)),
            "latitude": .double(event.coordinate.latitude),
            "longitude": .double(event.coordinate.longitude),
        ]
        if let timeInside = event.timeInside { object["timeInside"] = .double(timeInside) }
        if event.observedAt != event.time { object["observedAt"] = .string(RFC3339.string(from: event.observedAt)) }
        if event.kind == .exit, event.reason != .left { object["reason"] = .string(event.reason.rawValue) }
        if let fence {
            if let name = fence.name { object["fenceName"] = .string(name) }
            if let group = fence.group { object["group"] = .string(group) }
            if let text = message(for: event, fence: fence) { object["message"] = .string(text) }
        }
        return .object(object)
    }

    /// `17:22:23` (UTC).
    static func clock(_ date: Date) -> String {
        let text = RFC3339.string(from: date)
        let start = text.index(text.startIndex, offsetBy: 11), end = text.index(start, offsetBy: 8)
        return String(text[start..<end])
    }

    /// `42 s`, `3 min 5 s`, `2 h 4 min`.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return total % 60 == 0 ? "\(total / 60) min" : "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }
}
