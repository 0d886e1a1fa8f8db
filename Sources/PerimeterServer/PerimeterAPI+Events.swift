import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `GET /v1/events?after=SEQ&limit=N`: the logged events after a sequence number, oldest first;
    /// `next` is the cursor for the following page.
    func getEvents(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let after = try integer(request, "after", default: 0, in: 0...Int64.max)
        let limit = Int(try integer(request, "limit", default: 100, in: 1...1000))
        let page: [GeofencingEvent]
        do throws(GeofencingError) {
            try service.flush()
            page = try service.loggedEvents(after: after, limit: limit)
        } catch {
            throw error.problem
        }
        let events: [JSONValue] = page.map { EventJSON.value($0, fence: (try? service.fence(id: $0.event.fence)) ?? nil) }
        return Self.json(["events": .array(events), "next": .integer(page.last?.sequence ?? after)])
    }

    /// `GET /v1/events/stream`: Server-Sent Events. Resumes after `Last-Event-ID` (or `?after=`) from the
    /// durable log; filters `device`, `fence`, `group`, `type` (comma-separated); `locations=true` adds
    /// `event: location` messages with device positions (no `id:`, throttled per device).
    func streamEvents(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        var after: Int64?
        if let text = request.header("last-event-id")?.trimmingCharacters(in: .whitespaces) ?? request.query["after"] {
            guard let value = Int64(text), value >= 0 else {
                throw Problem(400, "invalid-parameter", title: "Invalid resume position",
                              detail: "Last-Event-ID (or ?after=) is '\(text)'; it must be an event sequence number ≥ 0",
                              extra: ["parameter": "Last-Event-ID"])
            }
            after = value
        }
        func set(_ name: String) -> Set<String> {
            Set((request.query[name] ?? "").split(separator: ",").map { String($0) })
        }
        let types = set("type")
        if let unknown = types.first(where: { GeofenceEventKind(rawValue: $0) == nil }) {
            throw Problem(400, "invalid-parameter", title: "Invalid query parameter",
                          detail: "type '\(unknown)' is not an event type (entry, dwell, exit, cross, inside)",
                          extra: ["parameter": "type"])
        }
        var locations = false
        if let text = request.query["locations"] {
            switch text.lowercased() {
            case "true", "1", "": locations = true
            case "false", "0": locations = false
            default:
                throw Problem(400, "invalid-parameter", title: "Invalid query parameter",
                              detail: "locations is '\(text)'; it must be true or false",
                              extra: ["parameter": "locations"])
            }
        }
        let filter = EventFilter(devices: set("device"), fences: set("fence"), groups: set("group"), types: types,
                                 locations: locations)
        let stream = HTTPStream()
        do throws(GeofencingError) {
            try hub.subscribe(stream, filter: filter, after: after)
        } catch {
            throw error.problem
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                                   ("X-Accel-Buffering", "no")], body: .stream(stream))
    }
}
