import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService
import Synchronization

/// The REST API: routes a request, checks its token, scope, rate and size, runs the handler and turns
/// every failure into an RFC 9457 problem document. Transport-independent: tests call ``handle(_:)``
/// directly; ``PerimeterServer`` puts it behind an ``HTTPServer``.
public final class PerimeterAPI: Sendable {
    /// The service the handlers drive.
    public let service: GeofencingService
    /// Limits and tokens.
    public let configuration: APIConfiguration
    /// Counters for `/metrics`.
    public let metrics: Metrics
    /// The SSE fan-out.
    public let hub: EventHub
    /// The simulated drives of `/v1/simulations` (the map page starts them).
    public let simulations: SimulationRunner
    /// The webhook dispatcher behind `/v1/webhooks`; `nil` answers those routes with 503.
    public let webhooks: WebhookDispatcher?
    let limiter: RateLimiter?
    let stopping = Atomic<Bool>(false)
    let storeSize: @Sendable () -> Int64?

    /// Creates the API on a configured `service`; `storeSize` reports the store's bytes for `/metrics`;
    /// `webhooks` serves `/v1/webhooks` (the caller starts and stops it).
    public init(service: GeofencingService, configuration: APIConfiguration = APIConfiguration(),
                metrics: Metrics = Metrics(), storeSize: @escaping @Sendable () -> Int64? = { nil },
                webhooks: WebhookDispatcher? = nil) {
        self.service = service
        self.configuration = configuration
        self.metrics = metrics
        let hub = EventHub(service: service, metrics: metrics)
        self.hub = hub
        self.simulations = SimulationRunner(service: service, onAccepted: { hub.publishLocations(CollectionOfOne($0)) })
        self.webhooks = webhooks
        self.storeSize = storeSize
        self.limiter = configuration.rateLimit.map { RateLimiter(rate: $0, burst: configuration.rateBurst) }
    }

    /// Marks the API as stopping: `/readyz` answers 503 from now on.
    public func beginStopping() { stopping.store(true, ordering: .relaxed) }

    /// Handles one request and returns its response, waiting for the commit of `POST /v1/locations`;
    /// never throws, never crashes on input. For tests and in-process callers; the server answers
    /// through ``handle(_:responder:)``.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let start = DispatchTime.now().uptimeNanoseconds
        let response: HTTPResponse
        do throws(Problem) {
            let (route, method) = try admit(request)
            response = try dispatch(route, method: method, request)
        } catch {
            response = error.response(instance: request.path)
        }
        return recorded(response, since: start)
    }

    /// Handles one request and answers through `responder`: at once, except `POST /v1/locations` with
    /// updates to store, which is answered once they are stored — the caller's thread does not wait,
    /// so one commit serves many requests. Same responses as ``handle(_:)``.
    ///
    /// `committer` is who commits for those answers: the service's committer thread, or the caller —
    /// a server whose event loops call ``GeofencingService/commitWaiting()`` after each round.
    public func handle(_ request: HTTPRequest, responder: HTTPResponder, committer: DeferredCommitter = .serviceThread) {
        let start = DispatchTime.now().uptimeNanoseconds
        do throws(Problem) {
            let (route, method) = try admit(request)
            guard case .locations = route else {
                responder.respond(recorded(try dispatch(route, method: method, request), since: start))
                return
            }
            let call = try prepareLocations(request)
            service.process(call.updates, committer: committer) { [self] outcome in
                // The response is built on the transport's thread, not the committer's.
                responder.respond { [self] in
                    let response: HTTPResponse
                    do throws(Problem) {
                        response = try finishLocations(call, outcome)
                    } catch {
                        response = error.response(instance: request.path)
                    }
                    return recorded(response, since: start)
                }
            }
        } catch {
            responder.respond(recorded(error.response(instance: request.path), since: start))
        }
    }

    /// Counts `response` in the metrics (status and latency since `start`) and returns it.
    private func recorded(_ response: HTTPResponse, since start: UInt64) -> HTTPResponse {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        metrics.recordRequest(status: response.status, seconds: seconds)
        return response
    }

    /// The checks before any handler: the route exists and allows the method, the token and its scope,
    /// the rate limit, the body size.
    /// - Returns: the route and the method (`HEAD` answered as `GET`).
    func admit(_ request: HTTPRequest) throws(Problem) -> (Route, String) {
        guard let route = Route(path: request.path) else {
            throw Problem.notFound("no endpoint at \(request.path); /openapi.json lists them")
        }
        let method = request.method == "HEAD" ? "GET" : request.method
        guard route.methods.contains(method) else {
            throw Problem(405, "method-not-allowed", title: "Method not allowed",
                          detail: "\(request.method) is not allowed on \(request.path); use \(route.methods.joined(separator: ", "))",
                          headers: [("Allow", route.methods.joined(separator: ", "))])
        }
        let scope = route.scope(method: method)
        let client = try authorize(request, scope: scope)
        // Public endpoints (health, readiness, the document) are not rate limited: probes must get through.
        if scope != nil, let limiter, let wait = limiter.acquire(client) {
            let seconds = Int(wait.rounded(.up))
            throw Problem(429, "rate-limited", title: "Too many requests",
                          detail: "the rate limit of \(configuration.rateLimit ?? 0) requests/s for '\(client)' is exhausted; retry in \(seconds) s",
                          extra: ["retryAfter": .integer(Int64(seconds))], headers: [("Retry-After", String(seconds))])
        }
        if request.isBodyTooLarge || request.body.count > configuration.maximumBodySize {
            throw Problem(413, "body-too-large", title: "Request body too large",
                          detail: "the body exceeds \(configuration.maximumBodySize) bytes; split it into smaller requests")
        }
        return (route, method)
    }

    /// Runs the handler of an admitted request.
    func dispatch(_ route: Route, method: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        switch (route, method) {
        case (.health, _): return Self.json(["status": "ok"])
        case (.ready, _): return try ready()
        case (.metrics, _): return metricsResponse()
        case (.openAPI, _): return Self.jsonBytes(OpenAPI.documentBytes)
        case (.fences, "GET"): return try listFences(request)
        case (.fences, "POST"): return try importFences(request)
        case (.fences, _): return try deleteGroup(request)
        case (.fence(let id), "GET"): return try getFence(id)
        case (.fence(let id), "PUT"): return try putFence(id, request)
        case (.fence(let id), _): return try deleteFence(id)
        case (.locations, _): return try postLocations(request)
        case (.device(let id), "GET"): return try getDevice(id)
        case (.device(let id), _): return try forgetDevice(id, request)
        case (.deviceConsent(let id), _): return try putConsent(id, request)
        case (.consent, "GET"): return try getServiceConsent()
        case (.consent, _): return try putServiceConsent(request)
        case (.events, _): return try getEvents(request)
        case (.eventStream, _): return try streamEvents(request)
        case (.page, _):
            guard let page = MapPage.response(for: request.path) else { throw Problem.notFound("no page at \(request.path)") }
            return page
        case (.simulations, "GET"): return Self.json(simulations.list())
        case (.simulations, _): return Self.json(try simulations.start(request.body), status: 201)
        case (.simulation(let id), "GET"): return Self.json(try simulations.simulation(id: id))
        case (.simulation(let id), _): return Self.json(try simulations.stop(id: id))
        case (.webhooks, "GET"): return try listWebhooks()
        case (.webhooks, _): return try registerWebhook(request)
        case (.webhook(let id), "GET"): return try getWebhook(id)
        case (.webhook(let id), _): return try deleteWebhook(id)
        case (.webhookDeadLetters(let id), _): return try listDeadLetters(id, request)
        case (.webhookRedrive(let id), _): return try redriveDeadLetters(id, request)
        }
    }

    /// Checks the bearer token; returns the rate-limit key (token name, or the client address).
    func authorize(_ request: HTTPRequest, scope: AccessToken.Scope?) throws(Problem) -> String {
        guard !configuration.tokens.isEmpty else { return "address:" + request.remoteAddress }
        guard let scope else { return "address:" + request.remoteAddress }
        let challenge = [(name: "WWW-Authenticate", value: "Bearer realm=\"perimeter\"")]
        guard let header = request.header("authorization") else {
            throw Problem(401, "unauthorized", title: "Authentication required",
                          detail: "send 'Authorization: Bearer <secret>' with a token that has the '\(scope.rawValue)' scope",
                          headers: challenge)
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Problem(401, "unauthorized", title: "Authentication required",
                          detail: "the Authorization header must use the Bearer scheme", headers: challenge)
        }
        let secret = Array(parts[1].utf8)
        guard let token = configuration.tokens.first(where: { $0.matches(secret: secret) }) else {
            throw Problem(401, "unauthorized", title: "Authentication required",
                          detail: "the bearer token is not valid", headers: challenge)
        }
        guard token.grants(scope) else {
            throw Problem(403, "forbidden", title: "Insufficient scope",
                          detail: "token '\(token.name)' lacks the '\(scope.rawValue)' scope needed for \(request.method) \(request.path)")
        }
        return "token:" + token.name
    }

    func ready() throws(Problem) -> HTTPResponse {
        guard !stopping.load(ordering: .relaxed), service.options != nil else {
            throw Problem(503, "not-ready", title: "Not ready", detail: "the server is starting or stopping")
        }
        return Self.json(["status": "ready"])
    }

    func metricsResponse() -> HTTPResponse {
        var gauges: [(name: String, help: String, value: Double)] = [
            ("perimeter_events_logged", "Sequence number of the last logged event.", Double(service.lastEventSequence)),
            ("perimeter_updates_processed", "Location updates processed since the store was created.",
             Double(service.processedUpdateCount)),
            ("perimeter_fences", "Monitored fences.", Double((try? service.features().count) ?? 0)),
            ("perimeter_store_commits", "Store transactions committed since the server started (concurrent requests share them).",
             Double(service.commitCount)),
        ]
        let time = service.timeStatistics
        gauges.append(("perimeter_clock_events", "Events the service's clock fired without a new fix since the server started.",
                       Double(time.clockEvents)))
        gauges.append(("perimeter_updates_late", "Updates dated before a timer the clock had fired for their device, evaluated as of that timer, since the server started.",
                       Double(time.lateUpdates)))
        if let bytes = storeSize() {
            gauges.append(("perimeter_store_bytes", "Size of the store on disk (database and WAL).", Double(bytes)))
        }
        // The webhook backlog is read from the webhook store when scraped, not on every delivery.
        var perWebhook = ""
        if let webhooks {
            if let pending = try? webhooks.pendingCount() { metrics.setWebhookPending(Int(pending)) }
            perWebhook = (try? webhooks.metricsText()) ?? ""
        }
        return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
                            bytes: Array((metrics.render(gauges: gauges) + perWebhook).utf8))
    }

    // MARK: - Helpers

    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        var bytes: [UInt8] = []
        JSONWriter().write(value, into: &bytes)
        return HTTPResponse(status: status, contentType: "application/json", bytes: bytes)
    }

    static func jsonBytes(_ bytes: [UInt8], status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "application/json", bytes: bytes)
    }

    static func parseJSON(_ body: [UInt8]) throws(Problem) -> JSONValue {
        guard !body.isEmpty else { throw Problem.badRequest("empty-body", "the request needs a JSON body") }
        do throws(JSONParseError) {
            return try JSONParser().parse(body)
        } catch {
            throw Problem.invalidJSON(error)
        }
    }

    func integer(_ request: HTTPRequest, _ name: String, default value: Int64, in range: ClosedRange<Int64>)
        throws(Problem) -> Int64 {
        guard let text = request.query[name] else { return value }
        guard let number = Int64(text), range.contains(number) else {
            throw Problem(400, "invalid-parameter", title: "Invalid query parameter",
                          detail: "query parameter '\(name)' is '\(text)'; it must be an integer in \(range.lowerBound)...\(range.upperBound)",
                          extra: ["parameter": .string(name)])
        }
        return number
    }

    /// The boolean query parameter `name` (`true`/`1`/empty or `false`/`0`), or `value` when absent.
    func boolean(_ request: HTTPRequest, _ name: String, default value: Bool) throws(Problem) -> Bool {
        guard let text = request.query[name] else { return value }
        switch text.lowercased() {
        case "true", "1", "": return true
        case "false", "0": return false
        default:
            throw Problem(400, "invalid-parameter", title: "Invalid query parameter",
                          detail: "query parameter '\(name)' is '\(text)'; it must be true or false",
                          extra: ["parameter": .string(name)])
        }
    }

    /// Whether the request's events carry their fence's properties: the query parameter `properties`,
    /// else ``APIConfiguration/eventProperties``.
    func eventProperties(_ request: HTTPRequest) throws(Problem) -> Bool {
        try boolean(request, "properties", default: configuration.eventProperties)
    }
}

extension GeofencingError {
    /// The problem document for a service error.
    var problem: Problem {
        let (status, title): (Int, String) = switch code {
        case .featureNotFound, .deviceNotFound: (404, "Not found")
        case .invalidFeature: (422, "Invalid feature")
        case .limitExceeded: (409, "Limit exceeded")
        case .invalidArgument: (400, "Bad request")
        case .consentMissing: (403, "Consent missing")
        case .inaccurateLocation, .invalidLocation, .outOfOrderUpdate, .futureUpdate: (422, "Location rejected")
        case .notConfigured, .storageFailure: (503, "Service unavailable")
        case .incompatibleStorage: (500, "Storage incompatible")
        }
        var extra: [String: JSONValue] = ["code": .string(code.rawValue)]
        if let featureID { extra["fenceId"] = .string(featureID.rawValue) }
        if let device { extra["deviceId"] = .string(device.rawValue) }
        if !problems.isEmpty {
            extra["errors"] = .array(problems.map { problem in
                var item: [String: JSONValue] = ["detail": .string(problem.message), "pointer": .string(problem.path.jsonPointer),
                                                 "path": .string(problem.path.description)]
                if let index = problem.featureIndex { item["index"] = .integer(Int64(index)) }
                return .object(item)
            })
        }
        let pointer = problems.first.map { $0.path.jsonPointer }
        let slug = code.rawValue.reduce(into: "") { text, c in
            if c.isUppercase { text += "-" + c.lowercased() } else { text.append(c) }
        }
        return Problem(status, slug, title: title, detail: message, pointer: pointer, extra: extra)
    }
}
