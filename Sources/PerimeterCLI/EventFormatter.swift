import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterService

/// Renders events for people (`text`) or programs (`ndjson`).
///
/// A text line always says what happened (`Entered Firehole River at 17:22:23`) and, when the fence has
/// a `perimeter:message` template, adds the rendered message after a dash. An NDJSON line is the event's
/// JSON as the server writes it (``GeofencingEvent/writeJSON(into:properties:)``).
struct EventFormatter {
    enum Format: String, CaseIterable {
        case text, ndjson
    }

    let format: Format
    /// Whether more than one device is replayed (text lines then name the device).
    let manyDevices: Bool

    /// One line (without newline) for `logged`.
    func line(for logged: GeofencingEvent) -> String {
        switch format {
        case .text:
            var text = Self.sentence(for: logged)
            if let message = logged.message { text += " — " + message }
            return manyDevices ? "\(logged.event.device): \(text)" : text
        case .ndjson:
            return String(decoding: logged.json(), as: UTF8.self)
        }
    }

    /// `Entered Firehole River at 17:22:23`, the Mapbox tutorial's banner.
    static func sentence(for logged: GeofencingEvent) -> String {
        let event = logged.event
        let name = logged.fenceName ?? event.fence.rawValue
        let clock = GeofencingEvent.clock(event.time)
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

    /// The engine's events of a replay as the service would log them: each with its fence's name,
    /// group, properties and rendered message. `sequence` is the event's position in the replay's
    /// output, from 1, as if the replay were a fresh service's event log.
    static func logged(_ events: [GeofenceEvent], fences: FenceSet) -> [GeofencingEvent] {
        var fence: Fence?
        return events.enumerated().map { offset, event in
            if fence?.id != event.fence { fence = fences.fence(id: event.fence) }
            return GeofencingEvent(sequence: Int64(offset + 1), event: event, fence: fence)
        }
    }

    /// `42 s`, `3 min 5 s`, `2 h 4 min`.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite else { return "\(seconds) s" }
        let total = Int(seconds.rounded())
        if total < 60 { return "\(total) s" }
        if total < 3600 { return total % 60 == 0 ? "\(total / 60) min" : "\(total / 60) min \(total % 60) s" }
        return "\(total / 3600) h \(total % 3600 / 60) min"
    }
}
