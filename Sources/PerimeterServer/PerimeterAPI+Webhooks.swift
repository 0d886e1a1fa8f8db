import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterWebhooks

/// `/v1/webhooks` (admin scope): registration, status, deletion, dead letters and redrive, each a thin
/// layer over ``WebhookDispatcher`` (docs/webhooks.md).
extension PerimeterAPI {
    /// The dispatcher, or 503 when this API was built without one.
    func webhookDispatcher() throws(Problem) -> WebhookDispatcher {
        guard let webhooks else {
            throw Problem(503, "webhooks-unavailable", title: "Service unavailable",
                          detail: "this server was started without a webhook dispatcher")
        }
        return webhooks
    }

    /// `POST /v1/webhooks` `{"url", "filter"?, "secret"?, "id"?}` → 201 with the secret (shown only here).
    func registerWebhook(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let dispatcher = try webhookDispatcher()
        let body = try Self.parseJSON(request.body)
        try Self.checkFilterIDs(body)
        do throws(WebhookError) {
            let parsed = try WebhookJSON.parseRegistrationRequest(body)
            let created = try dispatcher.register(url: parsed.url, filter: parsed.filter, secret: parsed.secret, id: parsed.id)
            var bytes: [UInt8] = []
            JSONWriter().write(WebhookJSON.created(created), into: &bytes)
            return HTTPResponse(status: 201, contentType: "application/json", bytes: bytes,
                                headers: [("Location", "/v1/webhooks/" + created.id)])
        } catch {
            throw error.problem
        }
    }

    /// The device and fence ids of a registration's filter follow the id rule (``RequestID``): 422
    /// pointing at the first that does not. The dispatcher checks everything else.
    static func checkFilterIDs(_ body: JSONValue) throws(Problem) {
        for member in ["devices", "fences"] {
            guard case .array(let items)? = body["filter"]?[member] else { continue }
            for (index, item) in items.enumerated() {
                if case .string(let id) = item, let violation = RequestID.violation(id, name: "id") {
                    throw RequestID.bodyProblem(violation, at: JSONPath([.key("filter"), .key(member), .index(index)]))
                }
            }
        }
    }

    /// `GET /v1/webhooks` → `{"webhooks": [status…]}` in registration order.
    func listWebhooks() throws(Problem) -> HTTPResponse {
        let dispatcher = try webhookDispatcher()
        do throws(WebhookError) {
            return Self.json(["webhooks": .array(try dispatcher.webhooks().map(\.json))])
        } catch {
            throw error.problem
        }
    }

    /// `GET /v1/webhooks/{id}` → the webhook's status and counters.
    func getWebhook(_ id: String) throws(Problem) -> HTTPResponse {
        let dispatcher = try webhookDispatcher()
        do throws(WebhookError) {
            return Self.json(try dispatcher.webhook(id: id).json)
        } catch {
            throw error.problem
        }
    }

    /// `DELETE /v1/webhooks/{id}` → 204; its state and dead letters are deleted.
    func deleteWebhook(_ id: String) throws(Problem) -> HTTPResponse {
        let dispatcher = try webhookDispatcher()
        do throws(WebhookError) {
            try dispatcher.unregister(id: id)
            return HTTPResponse(status: 204)
        } catch {
            throw error.problem
        }
    }

    /// `GET /v1/webhooks/{id}/dead-letters?after=SEQ&limit=N` → `{"deadLetters": […], "next": SEQ}`;
    /// `next` (the last sequence returned) is present only when the page is full.
    func listDeadLetters(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let dispatcher = try webhookDispatcher()
        let after = try integer(request, "after", default: 0, in: 0...Int64.max)
        let limit = try integer(request, "limit", default: 100, in: 1...1000)
        do throws(WebhookError) {
            let letters = try dispatcher.deadLetters(id: id, after: after, limit: Int(limit))
            var object: [String: JSONValue] = ["deadLetters": .array(letters.map(WebhookJSON.deadLetter))]
            if letters.count == Int(limit), let last = letters.last { object["next"] = .integer(last.sequence) }
            return Self.json(.object(object))
        } catch {
            throw error.problem
        }
    }

    /// `POST /v1/webhooks/{id}/dead-letters/redrive` `{"sequences": […]}` (or no body: all) → 202
    /// `{"queued": N}`.
    func redriveDeadLetters(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let dispatcher = try webhookDispatcher()
        let body: JSONValue? = request.body.isEmpty ? nil : try Self.parseJSON(request.body)
        do throws(WebhookError) {
            let queued = try dispatcher.redrive(id: id, sequences: try WebhookJSON.parseRedriveRequest(body))
            return Self.json(["queued": .integer(Int64(queued))], status: 202)
        } catch {
            throw error.problem
        }
    }
}

extension WebhookError {
    /// The problem document: `invalidArgument` 422 when it names a body member (400 otherwise),
    /// `targetRefused` 422, `notFound` 404, `conflict` 409, `storageFailure` 503; `field` becomes the
    /// JSON Pointer (`filter.types[1]` → `/filter/types/1`) and is kept as `path`.
    var problem: Problem {
        let (status, slug, title): (Int, String, String) = switch code {
        case .invalidArgument: (field == nil ? 400 : 422, "invalid-webhook", "Invalid webhook request")
        case .targetRefused: (422, "webhook-target-refused", "Webhook target refused")
        case .notFound: (404, "not-found", "Not found")
        case .conflict: (409, "webhook-conflict", "Webhook already exists")
        case .storageFailure: (503, "webhook-storage-failure", "Service unavailable")
        case .transport: (502, "webhook-transport", "Webhook delivery failed")
        }
        var extra: [String: JSONValue] = ["code": .string(code.rawValue)]
        if let field { extra["path"] = .string(field) }
        return Problem(status, slug, title: title, detail: message, pointer: field.map(Self.jsonPointer), extra: extra)
    }

    /// `filter.types[1]` → `/filter/types/1`; `""` (the whole body) → `""`.
    static func jsonPointer(_ field: String) -> String {
        var pointer = ""
        var token = ""
        var started = false
        func flush() {
            if started || !token.isEmpty {
                pointer += "/" + token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            }
            token = ""
            started = false
        }
        for character in field {
            switch character {
            case ".": flush(); started = true
            case "[": flush(); started = true
            case "]": flush()
            default: token.append(character)
            }
        }
        flush()
        return pointer
    }
}
