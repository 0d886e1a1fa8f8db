/// The API's endpoints, matched from a method and a path.
enum Route: Hashable, Sendable {
    case health, ready, metrics, openAPI
    case fences, fence(String)
    case locations
    case device(String), deviceConsent(String)
    case events, eventStream
    case page, simulations, simulation(String)
    case webhooks, webhook(String), webhookDeadLetters(String), webhookRedrive(String)

    /// The route for `path`, or `nil` when no endpoint has that path.
    init?(path: String) {
        if MapPage.paths.contains(path) { self = .page; return }
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
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

    /// The methods the route answers.
    var methods: [String] {
        switch self {
        case .health, .ready, .metrics, .openAPI, .device, .events, .eventStream, .page, .webhookDeadLetters: ["GET"]
        case .fences: ["GET", "POST", "DELETE"]
        case .fence: ["GET", "PUT", "DELETE"]
        case .locations: ["POST"]
        case .deviceConsent: ["PUT"]
        case .simulations, .webhooks: ["GET", "POST"]
        case .simulation, .webhook: ["GET", "DELETE"]
        case .webhookRedrive: ["POST"]
        }
    }

    /// The scope a call needs; `nil` for public endpoints.
    func scope(method: String) -> AccessToken.Scope? {
        switch self {
        case .health, .ready, .openAPI, .page: return nil
        case .fences where method == "DELETE": return .admin
        case .webhooks, .webhook, .webhookDeadLetters, .webhookRedrive: return .admin
        default: return method == "GET" ? .read : .write
        }
    }
}
