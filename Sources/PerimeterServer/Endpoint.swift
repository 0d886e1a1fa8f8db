import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

/// One endpoint of the API, declared once in ``PerimeterAPI/endpoints``: what routing, method and scope
/// checks, content-type checks, the handler call and the OpenAPI document's `paths` are all derived from.
struct Endpoint: Sendable {
    /// How the handler answers.
    enum Handler: Sendable {
        /// Answers before it returns.
        case immediate(@Sendable (PerimeterAPI, EndpointCall) throws(Problem) -> HTTPResponse)
        /// Answers later through the ``Reply`` (exactly once), e.g. after a commit shared with other
        /// requests; a thrown problem is answered at once instead.
        case deferred(@Sendable (PerimeterAPI, EndpointCall, Reply) throws(Problem) -> Void)
    }

    /// The request body an endpoint reads.
    struct Body: Sendable {
        /// The media types accepted, each with its schema for the document; the first is the usual one.
        var media: [(type: String, schema: JSONValue)]
        /// Whether a request must carry one (an empty body where one is required is a 400).
        var isRequired = true

        /// A JSON body of `schema`.
        static func json(_ schema: JSONValue, required: Bool = true) -> Body {
            Body(media: [("application/json", schema)], isRequired: required)
        }

        /// The accepted media types.
        var types: [String] { media.map(\.type) }
    }

    /// The method (`GET`, `PUT` …; `HEAD` is answered wherever `GET` is).
    var method: String
    /// The path pattern, e.g. `/v1/fences/{id}`.
    var path: PathPattern
    /// The scope a call needs; `nil` for a public endpoint.
    var scope: AccessToken.Scope?
    /// The OpenAPI `operationId`; `nil` keeps the endpoint out of the document (the map page's files).
    var operationID: String?
    /// The OpenAPI `summary`.
    var summary: String
    /// Query and header parameters for the document (path parameters come from ``path``).
    var parameters: [JSONValue] = []
    /// The body the endpoint reads, if any: its accepted media types are enforced (415 otherwise).
    var body: Body?
    /// The documented responses besides those every operation can get (``OpenAPI/responses(_:secured:)``).
    var responses: [String: JSONValue]
    /// The handler.
    var handler: Handler

    init(_ method: String, _ path: String, scope: AccessToken.Scope?, operationID: String?, summary: String,
         parameters: [JSONValue] = [], body: Body? = nil, responses: [String: JSONValue], handler: Handler) {
        self.method = method
        self.path = PathPattern(path)
        self.scope = scope
        self.operationID = operationID
        self.summary = summary
        self.parameters = parameters
        self.body = body
        self.responses = responses
        self.handler = handler
    }

    /// Whether the endpoint appears in the OpenAPI document.
    var isDocumented: Bool { operationID != nil }
}

/// An admitted request on its way to a handler: the request and the path's parameters, decoded and
/// checked (``RequestID``).
struct EndpointCall: Sendable {
    /// The request.
    var request: HTTPRequest
    /// The path parameters by name (`id`), percent-decoded.
    var parameters: [String: String]
    /// Who commits for a deferred answer (``PerimeterAPI/handle(_:responder:committer:)``).
    var committer: DeferredCommitter

    /// The path parameter `id`.
    var id: String { parameters["id"] ?? "" }
}

/// A path pattern: literal segments and `{name}` parameters, each parameter one whole segment.
struct PathPattern: Sendable, Hashable, CustomStringConvertible {
    enum Segment: Sendable, Hashable {
        case literal(String)
        case parameter(String)
    }

    /// The segments (none for `/`).
    let segments: [Segment]
    /// The pattern as written (`/v1/fences/{id}`): the document's key.
    let description: String
    /// How many segments are literal: the more specific pattern wins when two match.
    let literalCount: Int

    init(_ text: String) {
        description = text
        segments = text.split(separator: "/").map { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
        }
        literalCount = segments.count(where: { if case .literal = $0 { true } else { false } })
    }

    /// The names of the parameters, in order.
    var parameterNames: [String] {
        segments.compactMap { if case .parameter(let name) = $0 { name } else { nil } }
    }

    /// The parameters when `parts` (decoded segments) match, else `nil`.
    func match(_ parts: [String]) -> [String: String]? {
        guard parts.count == segments.count else { return nil }
        for index in segments.indices {
            if case .literal(let text) = segments[index], text != parts[index] { return nil }
        }
        var parameters: [String: String] = [:]
        for index in segments.indices {
            if case .parameter(let name) = segments[index] { parameters[name] = parts[index] }
        }
        return parameters
    }
}

/// Finds the endpoint of a method and path in a table of endpoints.
struct Router: Sendable {
    /// What a method and path lead to.
    enum Outcome {
        /// The endpoint and its path parameters.
        case found(Endpoint, parameters: [String: String])
        /// No endpoint has that path (or a segment is not valid percent-encoded UTF-8).
        case notFound
        /// The path exists, not with this method; the methods it has, in table order.
        case methodNotAllowed([String])
    }

    /// The table.
    let endpoints: [Endpoint]
    /// The table grouped by path pattern, patterns and methods in table order.
    private let byPath: [(pattern: PathPattern, endpoints: [Endpoint])]
    /// At index n, the indexes in ``byPath`` of the patterns with n segments.
    private let bySegmentCount: [[Int]]

    /// A router over `endpoints`.
    init(endpoints: [Endpoint]) {
        self.endpoints = endpoints
        var groups: [(pattern: PathPattern, endpoints: [Endpoint])] = []
        for endpoint in endpoints {
            if let index = groups.firstIndex(where: { $0.pattern == endpoint.path }) {
                groups[index].endpoints.append(endpoint)
            } else {
                groups.append((endpoint.path, [endpoint]))
            }
        }
        byPath = groups
        var counts = Array(repeating: [Int](), count: (groups.map(\.pattern.segments.count).max() ?? 0) + 1)
        for index in groups.indices { counts[groups[index].pattern.segments.count].append(index) }
        bySegmentCount = counts
    }

    /// The endpoint for `method` on `path`.
    ///
    /// `path` is the raw request path (``HTTPRequest/path``, still percent-encoded): it is split on `/`
    /// first and each segment decoded after, so an id containing `/` is addressed as `%2F`
    /// (`/v1/fences/a%2Fb` is the fence `a/b`). Empty segments are skipped, except that only `/` itself
    /// matches the root. When two patterns match, the one with more literal segments wins. `HEAD` finds
    /// the `GET` endpoint.
    func route(method: String, path: String) -> Outcome {
        var parts: [String] = []
        for segment in path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            // More segments than any pattern has: no need to decode the rest.
            guard parts.count + 1 < bySegmentCount.count, let decoded = Self.percentDecoded(segment) else { return .notFound }
            parts.append(decoded)
        }
        if parts.isEmpty && path != "/" { return .notFound }
        var best: (group: Int, literals: Int, parameters: [String: String])?
        for index in bySegmentCount[parts.count] {
            let pattern = byPath[index].pattern
            guard best == nil || pattern.literalCount > best!.literals, let parameters = pattern.match(parts) else { continue }
            best = (index, pattern.literalCount, parameters)
        }
        guard let best else { return .notFound }
        let wanted = method == "HEAD" ? "GET" : method
        let candidates = byPath[best.group].endpoints
        guard let endpoint = candidates.first(where: { $0.method == wanted }) else {
            return .methodNotAllowed(candidates.map(\.method))
        }
        return .found(endpoint, parameters: best.parameters)
    }

    /// `segment` with every `%XX` decoded; `nil` for a malformed escape or bytes that are not UTF-8.
    /// `+` stays `+` (it means a space only in query strings).
    static func percentDecoded(_ segment: Substring.UTF8View.SubSequence) -> String? {
        guard segment.contains(UInt8(ascii: "%")) else { return String(Substring(segment)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(segment.count)
        var index = segment.startIndex
        while index < segment.endIndex {
            let byte = segment[index]
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                index = segment.index(after: index)
                continue
            }
            let first = segment.index(after: index)
            guard first < segment.endIndex else { return nil }
            let second = segment.index(after: first)
            guard second < segment.endIndex, let high = hexValue(segment[first]), let low = hexValue(segment[second]) else {
                return nil
            }
            bytes.append(high << 4 | low)
            index = segment.index(after: second)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The one answer to an admitted request, given through the request's ``APIResponder``: counted in the
/// metrics, a problem turned into its document.
struct Reply: Sendable {
    let api: PerimeterAPI
    let request: HTTPRequest
    let responder: any APIResponder
    /// The path parameters: a 404 quotes only a prefix of them.
    let parameters: [String: String]
    /// When the request arrived (`DispatchTime` nanoseconds).
    let start: UInt64

    /// Answers with `response` now.
    func respond(_ response: HTTPResponse) {
        responder.respond(api.recorded(response, since: start))
    }

    /// Answers with `problem` now.
    func respond(_ problem: Problem) {
        respond(api.response(for: problem, request, parameters: parameters))
    }

    /// Answers with what `build` returns, run on the responder's thread (the transport's, not the
    /// caller's): for answers given from a committer that completes many requests at once.
    func respond(building build: @escaping @Sendable () throws(Problem) -> HTTPResponse) {
        responder.respond(building: { [self] in
            let response: HTTPResponse
            do throws(Problem) {
                response = try build()
            } catch {
                response = api.response(for: error, request, parameters: parameters)
            }
            return api.recorded(response, since: start)
        })
    }
}
