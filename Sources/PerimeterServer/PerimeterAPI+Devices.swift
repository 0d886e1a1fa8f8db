import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `GET /v1/devices/{id}`: the fences the device is inside, since when, whether dwell fired; 404 for
    /// a device never seen. On an API node of a cluster the answer is derived from the events the node
    /// logged and the updates it relayed (`"derivedFrom": "events"`; docs/cluster.md, "The API node").
    func getDevice(_ id: String) throws(Problem) -> HTTPResponse {
        let status: DeviceStatus
        do throws(GeofencingError) {
            status = try service.deviceStatus(of: DeviceID(id))
        } catch {
            throw error.problem
        }
        guard let last = status.lastUpdateTime else {
            throw Problem.notFound("no update was ever accepted for device \"\(id)\"")
        }
        let inside: [JSONValue] = status.presence.map { presence in
            var item: [String: JSONValue] = [
                "fenceId": .string(presence.fence.rawValue),
                "since": .string(RFC3339.string(from: presence.since)),
                "visitId": .string(presence.visitID),
                "dwellFired": .bool(presence.hasDwelled),
            ]
            if let name = ((try? service.fence(id: presence.fence)) ?? nil)?.name { item["fenceName"] = .string(name) }
            return .object(item)
        }
        var document: [String: JSONValue] = ["deviceId": .string(id), "lastUpdateTime": .string(RFC3339.string(from: last)),
                                             "consent": .bool(status.isConsentGiven), "inside": .array(inside)]
        if status.isDerivedFromEvents { document["derivedFrom"] = "events" }
        return Self.json(.object(document))
    }

    /// `DELETE /v1/devices/{id}[?exits=true]`: forgets the device (presence, timers, option state); with
    /// `exits=true` it first gets an exit with reason `reset` from every fence it is inside. Answers
    /// `{"deviceId","events"}` (`properties=false` as for `/v1/events`); 404 for a device the service
    /// does not know.
    func forgetDevice(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let exits: Bool
        switch request.query["exits"] {
        case nil, "false": exits = false
        case "true": exits = true
        case let other?:
            throw Problem(400, "invalid-parameter", title: "Invalid query parameter",
                          detail: "query parameter 'exits' is '\(other)'; it must be true or false",
                          extra: ["parameter": "exits"])
        }
        let properties = try eventProperties(request)
        let events: [GeofencingEvent]
        do throws(GeofencingError) {
            events = try service.forget(device: DeviceID(id), emittingExits: exits)
        } catch {
            throw error.problem
        }
        // {"deviceId":…,"events":[…]}: what JSONWriter writes for that object, the events by their encoder.
        var bytes = Array(#"{"deviceId":"#.utf8)
        JSONWriter.appendString(id, to: &bytes)
        bytes.append(contentsOf: #","events":["#.utf8)
        for (k, logged) in events.enumerated() {
            if k > 0 { bytes.append(UInt8(ascii: ",")) }
            logged.writeJSON(into: &bytes, properties: properties)
        }
        bytes.append(contentsOf: "]}".utf8)
        return HTTPResponse(status: 200, contentType: "application/json", bytes: bytes)
    }

    /// `PUT /v1/devices/{id}/consent` with `{"granted": true|false}`.
    func putConsent(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let granted = try Self.readGranted(request.body)
        do throws(GeofencingError) {
            try service.setUserConsent(granted, for: DeviceID(id))
        } catch {
            throw error.problem
        }
        return Self.json(["deviceId": .string(id), "granted": .bool(granted)])
    }
}
