import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `GET /v1/events?after=SEQ&limit=N&properties=BOOL`: the logged events after a sequence number,
    /// oldest first; `next` is the cursor for the following page. `properties=false` leaves the fences'
    /// properties out of the events.
    func getEvents(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let after = try integer(request, "after", default: 0, in: 0...Int64.max)
        let limit = Int(try integer(request, "limit", default: 100, in: 1...1000))
        let properties = try eventProperties(request)
        let page: [GeofencingEvent]
        do throws(GeofencingError) {
            try service.flush()
            page = try service.loggedEvents(after: after, limit: limit)
        } catch {
            throw error.problem
        }
        // {"events":[…],"next":N}: what JSONWriter writes for that object, the events written directly.
        var bytes = Array(#"{"events":["#.utf8)
        bytes.reserveCapacity(32 + page.count * 320)
        for (k, logged) in page.enumerated() {
            if k > 0 { bytes.append(UInt8(ascii: ",")) }
            logged.writeJSON(into: &bytes, properties: properties)
        }
        bytes.append(contentsOf: #"],"next":"#.utf8)
        JSONWriter.appendInteger(page.last?.sequence ?? after, to: &bytes)
        bytes.append(UInt8(ascii: "}"))
        return HTTPResponse(status: 200, contentType: "application/json", bytes: bytes)
    }

    /// `GET /v1/events/stream`: Server-Sent Events. Resumes after `Last-Event-ID` (or `?after=`) from the
    /// durable log; filters `device`, `fence`, `group`, `type` (comma-separated); `locations=true` adds
    /// `event: location` messages with device positions (no `id:`, throttled per device);
    /// `properties=false` leaves the fences' properties out of the events.
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
        let locations = try boolean(request, "locations", default: false)
        let filter = EventFilter(devices: set("device"), fences: set("fence"), groups: set("group"), types: types,
                                 locations: locations, properties: try eventProperties(request))
        let stream = hub.makeStream()
        do throws(GeofencingError) {
            try hub.subscribe(stream, filter: filter, after: after)
        } catch {
            throw error.problem
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                                                   ("X-Accel-Buffering", "no")], body: .stream(stream))
    }
}
