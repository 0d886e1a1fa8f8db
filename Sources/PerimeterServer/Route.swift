/// The API's endpoints, matched from a method and a path.
enum Route: Hashable, Sendable {
    case health, ready, metrics, openAPI
    case fences, fence(String)
    case locations
    case device(String), deviceConsent(String), consent
    case events, eventStream
    case page, simulations, simulation(String)
    case webhooks, webhook(String), webhookDeadLetters(String), webhookRedrive(String)

    /// The route for `path`, or `nil` when no endpoint has that path (or a segment is not valid
    /// percent-encoded UTF-8).
    ///
    /// `path` is the raw request path (``HTTPRequest/path``, still percent-encoded): it is split on `/`
    /// first and each segment decoded after, so an id containing `/` is addressed as `%2F`
    /// (`/v1/fences/a%2Fb` is the fence `a/b`). Already decoded paths without `%` route the same.
    init?(path: String) {
        if MapPage.paths.contains(path) { self = .page; return }
        var parts: [String] = []
        for segment in path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            guard let decoded = Self.percentDecoded(segment) else { return nil }
            parts.append(decoded)
        }
        switch parts.count {
        case 1:
            switch parts[0] {
            case "healthz": self = .health
            case "readyz": self = .ready
            case "metrics": self = .metrics
            case "openapi.json": self = .openAPI
            default: return nil
            }
        case 2 where parts[0] == "v1":
            switch parts[1] {
            case "fences": self = .fences
            case "locations": self = .locations
            case "events": self = .events
            case "simulations": self = .simulations
            case "webhooks": self = .webhooks
            case "consent": self = .consent
            default: return nil
            }
        case 3 where parts[0] == "v1":
            switch (parts[1], parts[2]) {
            case ("fences", let id): self = .fence(id)
            case ("devices", let id): self = .device(id)
            case ("events", "stream"): self = .eventStream
            case ("simulations", let id): self = .simulation(id)
            case ("webhooks", let id): self = .webhook(id)
            default: return nil
            }
        case 4 where parts[0] == "v1" && parts[1] == "devices" && parts[3] == "consent":
            self = .deviceConsent(parts[2])
        case 4 where parts[0] == "v1" && parts[1] == "webhooks" && parts[3] == "dead-letters":
            self = .webhookDeadLetters(parts[2])
        case 5 where parts[0] == "v1" && parts[1] == "webhooks" && parts[3] == "dead-letters" && parts[4] == "redrive":
            self = .webhookRedrive(parts[2])
        default:
            return nil
        }
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

    /// The methods the route answers.
    var methods: [String] {
        switch self {
        case .health, .ready, .metrics, .openAPI, .events, .eventStream, .page, .webhookDeadLetters: ["GET"]
        case .device: ["GET", "DELETE"]
        case .fences: ["GET", "POST", "DELETE"]
        case .fence: ["GET", "PUT", "DELETE"]
        case .locations: ["POST"]
        case .deviceConsent: ["PUT"]
        case .consent: ["GET", "PUT"]
        case .simulations, .webhooks: ["GET", "POST"]
        case .simulation, .webhook: ["GET", "DELETE"]
        case .webhookRedrive: ["POST"]
        }
    }

    /// The scope a call needs; `nil` for public endpoints.
    func scope(method: String) -> AccessToken.Scope? {
        switch self {
        case .health, .ready, .openAPI, .page: return nil
        case .fences where method == "DELETE", .device where method == "DELETE", .consent where method == "PUT": return .admin
        case .webhooks, .webhook, .webhookDeadLetters, .webhookRedrive: return .admin
        default: return method == "GET" ? .read : .write
        }
    }
}
