import PerimeterGeoJSON

/// The body of `POST /v1/webhooks`, read by ``WebhookJSON/parseRegistrationRequest(_:)``.
public struct WebhookRegistrationRequest: Hashable, Sendable {
    /// The target URL (validated by ``WebhookDispatcher/register(url:filter:secret:id:startAfter:)``).
    public var url: String
    /// Which events.
    public var filter: WebhookFilter
    /// The signing secret, or `nil` to have one generated.
    public var secret: String?
    /// The id, or `nil` to have one generated.
    public var id: String?

    /// Creates a request.
    public init(url: String, filter: WebhookFilter = WebhookFilter(), secret: String? = nil, id: String? = nil) {
        self.url = url
        self.filter = filter
        self.secret = secret
        self.id = id
    }
}

extension WebhookJSON {
    /// Reads `{"url", "filter"?, "secret"?, "id"?}`.
    /// - Throws: ``WebhookError/Code/invalidArgument`` naming the member (`url`, `secret`, `id`,
    ///   `filter.types`, or an unknown member).
    public static func parseRegistrationRequest(_ value: JSONValue) throws(WebhookError) -> WebhookRegistrationRequest {
        guard let object = value.objectValue else {
            throw WebhookError(.invalidArgument, "the body must be a JSON object {\"url\", \"filter\"?, \"secret\"?, \"id\"?}", field: "")
        }
        let known: Set<String> = ["url", "filter", "secret", "id"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw WebhookError(.invalidArgument, "\(unknown) is not a webhook member (use url, filter, secret, id)", field: unknown)
        }
        guard let url = object["url"]?.stringValue else {
            throw WebhookError(.invalidArgument, "url is required and must be a string (an http:// URL)", field: "url")
        }
        return WebhookRegistrationRequest(url: url, filter: try parseFilter(object["filter"]),
                                          secret: try optionalString(object, "secret"), id: try optionalString(object, "id"))
    }

    /// Reads the body of `POST …/dead-letters/redrive`: `{"sequences":[…]}`, or an empty body / `{}` /
    /// `null` for all dead letters (`nil`).
    /// - Throws: ``WebhookError/Code/invalidArgument`` (field `sequences[i]`).
    public static func parseRedriveRequest(_ value: JSONValue?) throws(WebhookError) -> [Int64]? {
        guard let value, !value.isNull else { return nil }
        guard let object = value.objectValue else {
            throw WebhookError(.invalidArgument, "the body must be a JSON object {\"sequences\"?: [integers]}", field: "")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "sequences" }) {
            throw WebhookError(.invalidArgument, "\(unknown) is not a redrive member (use sequences)", field: unknown)
        }
        guard let list = object["sequences"], !list.isNull else { return nil }
        guard let array = list.arrayValue else {
            throw WebhookError(.invalidArgument, "sequences must be an array of event sequence numbers", field: "sequences")
        }
        var sequences: [Int64] = []
        for (index, element) in array.enumerated() {
            guard let sequence = element.int64Value, sequence > 0 else {
                throw WebhookError(.invalidArgument, "sequences[\(index)] must be a positive integer", field: "sequences[\(index)]")
            }
            sequences.append(sequence)
        }
        return sequences
    }

    /// The `201` response to a registration: the registration with its `secret` (shown only here).
    public static func created(_ registration: WebhookRegistration) -> JSONValue {
        guard case .object(var object) = WebhookJSON.registration(registration) else { return .null }
        object["secret"] = .string(registration.secret)
        return .object(object)
    }

    private static func optionalString(_ object: [String: JSONValue], _ key: String) throws(WebhookError) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.stringValue else {
            throw WebhookError(.invalidArgument, "\(key) must be a string", field: key)
        }
        return text
    }
}
