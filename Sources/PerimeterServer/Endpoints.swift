import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterWebhooks

extension PerimeterAPI {
    /// Every endpoint of the API, each declared once: method, path, scope, OpenAPI operation, accepted
    /// body types and handler. Routing (404, 405 with `Allow`, `HEAD` as `GET`), scope checks, the 415
    /// check and the OpenAPI document's `paths` are derived from this table; adding an endpoint is
    /// adding an entry (docs/server.md, "Adding an endpoint"). Within a path, the order of the entries
    /// is the order of the `Allow` header.
    static let endpoints: [Endpoint] = probes + fences + devices + events + simulations + webhooks + page

    static let probes: [Endpoint] = [
        Endpoint("GET", "/healthz", scope: nil, operationID: "health", summary: "Liveness",
                 responses: ["200": OpenAPI.json(OpenAPI.status)],
                 handler: .immediate { _, _ throws(Problem) in json(["status": "ok"]) }),
        Endpoint("GET", "/readyz", scope: nil, operationID: "ready", summary: "Readiness (503 while starting or stopping)",
                 responses: ["200": OpenAPI.json(OpenAPI.status), "503": OpenAPI.problem],
                 handler: .immediate { api, _ throws(Problem) in try api.ready() }),
        Endpoint("GET", "/metrics", scope: .read, operationID: "metrics", summary: "Prometheus metrics (text format 0.0.4)",
                 responses: ["200": ["description": "Metrics", "content": ["text/plain": ["schema": ["type": "string"]]]]],
                 handler: .immediate { api, _ throws(Problem) in api.metricsResponse() }),
        Endpoint("GET", "/openapi.json", scope: nil, operationID: "openapi", summary: "This document",
                 responses: ["200": OpenAPI.json(["type": "object"])],
                 handler: .immediate { _, _ throws(Problem) in jsonBytes(OpenAPI.documentBytes) }),
    ]

    static let fences: [Endpoint] = [
        Endpoint("GET", "/v1/fences", scope: .read, operationID: "listFences", summary: "List fences in id order, a page at a time",
                 parameters: [OpenAPI.query("group", ["type": "string"]),
                              OpenAPI.query("limit", ["type": "integer", "minimum": 1, "maximum": 1000]),
                              OpenAPI.query("cursor", ["type": "string"])],
                 responses: ["200": OpenAPI.json(OpenAPI.ref("FencePage"))],
                 handler: .immediate { api, call throws(Problem) in try api.listFences(call.request) }),
        Endpoint("POST", "/v1/fences", scope: .write, operationID: "importFences",
                 summary: "Add or replace every feature of a FeatureCollection, atomically",
                 body: .json(OpenAPI.ref("FeatureCollection")),
                 responses: ["200": OpenAPI.json(["type": "object", "properties": ["imported": ["type": "integer"]]]),
                             "413": OpenAPI.problem, "422": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.importFences(call.request) }),
        Endpoint("DELETE", "/v1/fences", scope: .admin, operationID: "deleteGroup",
                 summary: "Delete every fence of a group, or with all=true every fence (admin scope); 400 without either",
                 parameters: [OpenAPI.query("group", ["type": "string", "minLength": 1]),
                              OpenAPI.query("all", ["type": "string", "enum": ["true"]])],
                 responses: ["200": OpenAPI.json(["type": "object", "properties": [
                     "removed": ["type": "integer"], "group": ["type": "string"], "all": ["type": "boolean"]]]),
                             "400": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.deleteGroup(call.request) }),
        Endpoint("GET", "/v1/fences/{id}", scope: .read, operationID: "getFence", summary: "One fence, as given",
                 responses: ["200": OpenAPI.json(OpenAPI.ref("Feature")), "404": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.getFence(call.id) }),
        Endpoint("PUT", "/v1/fences/{id}", scope: .write, operationID: "putFence",
                 summary: "Create or replace a fence from a GeoJSON Feature", body: .json(OpenAPI.ref("Feature")),
                 responses: ["200": OpenAPI.json(OpenAPI.ref("Feature")), "201": OpenAPI.json(OpenAPI.ref("Feature")),
                             "413": OpenAPI.problem, "422": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.putFence(call.id, call.request) }),
        Endpoint("DELETE", "/v1/fences/{id}", scope: .write, operationID: "deleteFence", summary: "Stop monitoring a fence",
                 responses: ["204": ["description": "Deleted"], "404": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.deleteFence(call.id) }),
    ]

    static let devices: [Endpoint] = [
        // Answered once the updates are committed, by a commit shared with other requests.
        Endpoint("POST", "/v1/locations", scope: .write, operationID: "postLocations",
                 summary: "Process one update, a JSON array of updates, or NDJSON (one update per line)",
                 parameters: [OpenAPI.propertiesParameter],
                 body: Endpoint.Body(media: [
                     ("application/json", ["oneOf": [OpenAPI.ref("LocationUpdate"), ["type": "array", "items": OpenAPI.ref("LocationUpdate")]]]),
                     ("application/x-ndjson", ["type": "string"]),
                     ("application/ndjson", ["type": "string"]),
                 ]),
                 responses: ["200": OpenAPI.json(OpenAPI.ref("LocationResult")), "403": OpenAPI.problem, "413": OpenAPI.problem,
                             "422": OpenAPI.problem],
                 handler: .deferred { api, call, reply throws(Problem) in try api.postLocations(call, reply) }),
        Endpoint("GET", "/v1/devices/{id}", scope: .read, operationID: "getDevice",
                 summary: "A device's fences, since when, and whether dwell fired",
                 responses: ["200": OpenAPI.json(OpenAPI.ref("Device")), "404": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.getDevice(call.id) }),
        Endpoint("DELETE", "/v1/devices/{id}", scope: .admin, operationID: "forgetDevice",
                 summary: "Forget a device's state; exits=true first emits exits with reason reset",
                 parameters: [OpenAPI.query("exits", ["type": "boolean"]), OpenAPI.propertiesParameter],
                 responses: ["200": OpenAPI.json(["type": "object", "required": ["deviceId", "events"], "properties": [
                     "deviceId": ["type": "string"], "events": ["type": "array", "items": OpenAPI.ref("Event")]]]),
                             "400": OpenAPI.problem, "404": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.forgetDevice(call.id, call.request) }),
        Endpoint("PUT", "/v1/devices/{id}/consent", scope: .write, operationID: "putConsent",
                 summary: "Grant or revoke a device's consent",
                 body: .json(["type": "object", "required": ["granted"], "properties": ["granted": ["type": "boolean"]]]),
                 responses: ["200": OpenAPI.json(["type": "object", "properties": [
                     "deviceId": ["type": "string"], "granted": ["type": "boolean"]]]), "422": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.putConsent(call.id, call.request) }),
        Endpoint("GET", "/v1/consent", scope: .read, operationID: "getServiceConsent",
                 summary: "Whether service-wide consent is given",
                 responses: ["200": OpenAPI.json(OpenAPI.ref("Consent"))],
                 handler: .immediate { api, _ throws(Problem) in try api.getServiceConsent() }),
        Endpoint("PUT", "/v1/consent", scope: .admin, operationID: "putServiceConsent",
                 summary: "Give or revoke service-wide consent (admin scope); without it no update is processed",
                 body: .json(OpenAPI.ref("Consent")),
                 responses: ["200": OpenAPI.json(OpenAPI.ref("Consent")), "422": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.putServiceConsent(call.request) }),
    ]

    static let events: [Endpoint] = [
        Endpoint("GET", "/v1/events", scope: .read, operationID: "getEvents",
                 summary: "Logged events after a sequence number, oldest first",
                 parameters: [OpenAPI.query("after", ["type": "integer", "minimum": 0]),
                              OpenAPI.query("limit", ["type": "integer", "minimum": 1, "maximum": 1000]),
                              OpenAPI.propertiesParameter],
                 responses: ["200": OpenAPI.json(["type": "object", "required": ["events", "next"], "properties": [
                     "events": ["type": "array", "items": OpenAPI.ref("Event")], "next": ["type": "integer"]]])],
                 handler: .immediate { api, call throws(Problem) in try api.getEvents(call.request) }),
        Endpoint("GET", "/v1/events/stream", scope: .read, operationID: "streamEvents",
                 summary: "Server-Sent Events: `id:` is the sequence; resume with Last-Event-ID; comments are heartbeats; with locations=true also `event: location` messages (no id) carrying {deviceId, time, latitude, longitude, accuracy?} of accepted updates, at most one per device every 0.25 s",
                 parameters: [
                     ["name": "Last-Event-ID", "in": "header", "schema": ["type": "string", "pattern": "^[0-9]+$"]],
                     OpenAPI.query("after", ["type": "integer", "minimum": 0]),
                     OpenAPI.query("device", ["type": "string"]), OpenAPI.query("fence", ["type": "string"]),
                     OpenAPI.query("group", ["type": "string"]),
                     OpenAPI.query("type", ["type": "string", "pattern": "^(entry|dwell|exit|cross|inside)(,(entry|dwell|exit|cross|inside))*$"]),
                     OpenAPI.query("locations", ["type": "boolean"]),
                     OpenAPI.propertiesParameter,
                 ],
                 responses: ["200": ["description": "An endless event stream",
                                     "content": ["text/event-stream": ["schema": ["type": "string"]]]]],
                 handler: .immediate { api, call throws(Problem) in try api.streamEvents(call.request) }),
    ]

    static let simulations: [Endpoint] = [
        Endpoint("GET", "/v1/simulations", scope: .read, operationID: "listSimulations",
                 summary: "Simulated drives, running and recently ended, oldest first",
                 responses: ["200": OpenAPI.json(["type": "object", "required": ["simulations"], "properties": [
                     "simulations": ["type": "array", "items": OpenAPI.simulation]]])],
                 handler: .immediate { api, _ throws(Problem) in json(api.simulations.list()) }),
        Endpoint("POST", "/v1/simulations", scope: .write, operationID: "startSimulation",
                 summary: "Start a simulated drive along a LineString, paced in real time",
                 body: .json(OpenAPI.simulationRequest),
                 responses: ["201": OpenAPI.json(OpenAPI.simulation), "409": OpenAPI.problem, "413": OpenAPI.problem,
                             "422": OpenAPI.problem, "503": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in json(try api.simulations.start(call.request.body), status: 201) }),
        Endpoint("GET", "/v1/simulations/{id}", scope: .read, operationID: "getSimulation", summary: "One simulated drive",
                 responses: ["200": OpenAPI.json(OpenAPI.simulation), "404": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in json(try api.simulations.simulation(id: call.id)) }),
        Endpoint("DELETE", "/v1/simulations/{id}", scope: .write, operationID: "stopSimulation",
                 summary: "Stop a simulated drive (no further updates are sent)",
                 responses: ["200": OpenAPI.json(OpenAPI.simulation), "404": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in json(try api.simulations.stop(id: call.id)) }),
    ]

    static let webhooks: [Endpoint] = [
        Endpoint("GET", "/v1/webhooks", scope: .admin, operationID: "listWebhooks",
                 summary: "Registered webhooks with their counters (admin scope)",
                 responses: ["200": OpenAPI.json(["type": "object", "required": ["webhooks"], "properties": [
                     "webhooks": ["type": "array", "items": OpenAPI.webhookStatus]]]), "503": OpenAPI.problem],
                 handler: .immediate { api, _ throws(Problem) in try api.listWebhooks() }),
        Endpoint("POST", "/v1/webhooks", scope: .admin, operationID: "registerWebhook",
                 summary: "Register a webhook; the secret is returned only here (admin scope)",
                 body: .json(OpenAPI.webhookRegistration),
                 responses: ["201": ["description": "Registered", "headers": ["Location": ["schema": ["type": "string"]]],
                                     "content": ["application/json": ["schema": OpenAPI.webhookCreated]]],
                             "409": OpenAPI.problem, "413": OpenAPI.problem, "422": OpenAPI.problem, "503": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.registerWebhook(call.request) }),
        Endpoint("GET", "/v1/webhooks/{id}", scope: .admin, operationID: "getWebhook",
                 summary: "A webhook with its counters (admin scope)",
                 responses: ["200": OpenAPI.json(OpenAPI.webhookStatus), "404": OpenAPI.problem, "503": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.getWebhook(call.id) }),
        Endpoint("DELETE", "/v1/webhooks/{id}", scope: .admin, operationID: "deleteWebhook",
                 summary: "Unregister a webhook and drop its dead letters (admin scope)",
                 responses: ["204": ["description": "Deleted"], "404": OpenAPI.problem, "503": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.deleteWebhook(call.id) }),
        Endpoint("GET", "/v1/webhooks/{id}/dead-letters", scope: .admin, operationID: "listDeadLetters",
                 summary: "Events kept after the retry window, in sequence order (admin scope)",
                 parameters: [OpenAPI.query("after", ["type": "integer", "minimum": 0]),
                              OpenAPI.query("limit", ["type": "integer", "minimum": 1, "maximum": 1000])],
                 responses: ["200": OpenAPI.json(["type": "object", "required": ["deadLetters"], "properties": [
                     "deadLetters": ["type": "array", "items": OpenAPI.deadLetter], "next": ["type": "integer"]]]),
                             "404": OpenAPI.problem, "503": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.listDeadLetters(call.id, call.request) }),
        // No body redrives every dead letter.
        Endpoint("POST", "/v1/webhooks/{id}/dead-letters/redrive", scope: .admin, operationID: "redriveDeadLetters",
                 summary: "Deliver dead letters again (all, or the given sequences) (admin scope)",
                 body: .json(["type": "object", "properties": [
                     "sequences": ["type": "array", "items": ["type": "integer", "minimum": 1]]]], required: false),
                 responses: ["202": OpenAPI.json(["type": "object", "required": ["queued"], "properties": ["queued": ["type": "integer"]]]),
                             "404": OpenAPI.problem, "413": OpenAPI.problem, "422": OpenAPI.problem, "503": OpenAPI.problem],
                 handler: .immediate { api, call throws(Problem) in try api.redriveDeadLetters(call.id, call.request) }),
    ]

    /// The map page's files: public, not API operations, so not in the OpenAPI document.
    static let page: [Endpoint] = MapPage.paths.sorted().map { path in
        Endpoint("GET", path, scope: nil, operationID: nil, summary: "The live map page", responses: [:],
                 handler: .immediate { _, _ throws(Problem) in
                     guard let page = MapPage.response(for: path) else { throw Problem.notFound("no page at \(path)") }
                     return page
                 })
    }

    /// The router over ``endpoints``.
    static let router = Router(endpoints: endpoints)
}
