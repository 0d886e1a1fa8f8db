import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService
import PerimeterWebhooks
import Synchronization

/// The REST API: routes a request, checks its token, scope, rate and size, runs the handler and turns
/// every failure into an RFC 9457 problem document. Transport-independent: ``PerimeterServer`` puts it
/// behind an ``HTTPServer``; in-process callers and tests answer through a ``CollectingResponder``.
/// Its endpoints are the table ``endpoints``.
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

    /// Handles one request and answers through `responder`, exactly once: at once, except
    /// `POST /v1/locations` with updates to store, which is answered once they are stored — the
    /// caller's thread does not wait, so one commit serves many requests. Never crashes on input: every
    /// failure is a problem document. The server's transport and in-process callers
    /// (``CollectingResponder``) take this same path.
    ///
    /// `committer` is who commits for those answers: the service's committer thread, or the caller —
    /// a server whose event loops call ``GeofencingService/commitWaiting()`` after each round.
    public func handle(_ request: HTTPRequest, responder: any APIResponder, committer: DeferredCommitter = .serviceThread) {
        let start = DispatchTime.now().uptimeNanoseconds
        var reply = Reply(api: self, request: request, responder: responder, parameters: [:], start: start)
        do throws(Problem) {
            let (endpoint, parameters) = try admit(request)
            reply = Reply(api: self, request: request, responder: responder, parameters: parameters, start: start)
            let call = EndpointCall(request: request, parameters: parameters, committer: committer)
            switch endpoint.handler {
            case .immediate(let handler): reply.respond(try handler(self, call))
            case .deferred(let handler): try handler(self, call, reply)
            }
        } catch {
            reply.respond(error)
        }
    }

    /// Counts `response` in the metrics (status and latency since `start`) and returns it.
    func recorded(_ response: HTTPResponse, since start: UInt64) -> HTTPResponse {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        metrics.recordRequest(status: response.status, seconds: seconds)
        return response
    }

    /// The response for `problem`: `instance` is the request path, and a 404 quotes no more than a
    /// prefix of the path's ids (``RequestID/excerpt(_:length:)``), in `detail` and in its members.
    func response(for problem: Problem, _ request: HTTPRequest, parameters: [String: String]) -> HTTPResponse {
        var problem = problem
        if problem.status == 404 {
            for id in parameters.values where RequestID.excerpt(id) != id {
                let short = RequestID.excerpt(id)
                problem.detail = problem.detail.replacingOccurrences(of: id, with: short)
                for (key, value) in problem.extra {
                    if case .string(let text) = value { problem.extra[key] = .string(text.replacingOccurrences(of: id, with: short)) }
                }
            }
        }
        return problem.response(instance: RequestID.excerpt(request.path, length: Self.instanceLength))
    }

    /// How much of the request path a problem's `instance` (and a 404 for an unknown path) quotes:
    /// every path without an id fits, and no more than a prefix of an id does.
    static let instanceLength = 40

    /// The checks before any handler: an endpoint has the path and the method, the token and its scope,
    /// the rate limit, the body size, the body's media type, the ids in the path.
    /// - Returns: the endpoint and the path's parameters.
    func admit(_ request: HTTPRequest) throws(Problem) -> (Endpoint, [String: String]) {
        let endpoint: Endpoint, parameters: [String: String]
        switch Self.router.route(method: request.method, path: request.path) {
        case .found(let found, let values):
            (endpoint, parameters) = (found, values)
        case .notFound:
            throw Problem.notFound("no endpoint at \(RequestID.excerpt(request.path, length: Self.instanceLength)); /openapi.json lists them")
        case .methodNotAllowed(let methods):
            let allowed = methods.joined(separator: ", ")
            throw Problem(405, "method-not-allowed", title: "Method not allowed",
                          detail: "\(RequestID.excerpt(request.method)) is not allowed on \(RequestID.excerpt(request.path, length: Self.instanceLength)); use \(allowed)",
                          headers: [("Allow", allowed)])
        }
        let client = try authorize(request, scope: endpoint.scope)
        // Public endpoints (health, readiness, the document) are not rate limited: probes must get through.
        if endpoint.scope != nil, let limiter, let wait = limiter.acquire(client) {
            let seconds = Int(wait.rounded(.up))
            throw Problem(429, "rate-limited", title: "Too many requests",
                          detail: "the rate limit of \(configuration.rateLimit ?? 0) requests/s for '\(client)' is exhausted; retry in \(seconds) s",
                          extra: ["retryAfter": .integer(Int64(seconds))], headers: [("Retry-After", String(seconds))])
        }
        if request.isBodyTooLarge || request.body.count > configuration.maximumBodySize {
            throw Self.bodyTooLarge(size: request.isBodyTooLarge ? nil : request.body.count,
                                    limit: configuration.maximumBodySize)
        }
        if let body = endpoint.body { try Self.checkMediaType(request, accepted: body) }
        for name in endpoint.path.parameterNames {
            if let violation = RequestID.violation(parameters[name] ?? "", name: name) {
                throw RequestID.pathProblem(violation, parameter: name)
            }
        }
        return (endpoint, parameters)
    }

    /// The 413 for a body over the limit, saying both ways out: smaller requests, or a server started
    /// with a larger `--max-body` (at least `size` when the size is known; a chunked body that grew past
    /// the limit was discarded unmeasured).
    static func bodyTooLarge(size: Int?, limit: Int) -> Problem {
        let what = size.map { "the body of \($0) bytes" } ?? "the body"
        let raise = size.map { "start perimeter serve with --max-body \($0) or more" }
            ?? "start perimeter serve with a --max-body (bytes) above the body's size"
        var extra: [String: JSONValue] = ["maximumBodySize": .integer(Int64(limit))]
        if let size { extra["bodySize"] = .integer(Int64(size)) }
        return Problem(413, "body-too-large", title: "Request body too large",
                       detail: "\(what) exceeds the limit of \(limit) bytes; split it into smaller requests, or \(raise)",
                       extra: extra)
    }

    /// 415 unless the request's body, when it has one, is of a type the endpoint accepts. A body without
    /// `Content-Type` is refused too; an empty body is left to the handler (400 where one is required).
    static func checkMediaType(_ request: HTTPRequest, accepted body: Endpoint.Body) throws(Problem) {
        guard !request.body.isEmpty else { return }
        let given = request.header("content-type").map(mediaType)
        guard let given, body.types.contains(given) else {
            let list = body.types.joined(separator: ", ")
            throw Problem(415, "unsupported-media-type", title: "Unsupported media type",
                          detail: given.map { "a body of type '\(RequestID.excerpt($0))' is not accepted here; send one of: \(list)" }
                              ?? "the body has no Content-Type; send it with one of: \(list)",
                          extra: ["accepted": .array(body.types.map { .string($0) })])
        }
    }

    /// The media type of a `Content-Type` value: lower-cased, without parameters (`; charset=utf-8`).
    static func mediaType(_ contentType: String) -> String {
        String(contentType.prefix { $0 != ";" }).trimmingCharacters(in: .whitespaces).lowercased()
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
        if let relay = service.relay { gauges += relay.gauges }
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
