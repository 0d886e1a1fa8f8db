import Foundation
import PerimeterGeoJSON

extension WebhookJSON {
    /// A registration as the API shows it: `{"id","url","filter","createdAt"}`; the secret only when
    /// `includeSecret` (storage), never in API responses.
    public static func registration(_ registration: WebhookRegistration, includeSecret: Bool = false) -> JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(registration.id), "url": .string(registration.url),
            "filter": filter(registration.filter), "createdAt": .string(RFC3339.string(from: registration.createdAt)),
        ]
        if includeSecret {
            object["secret"] = .string(registration.secret)
            object["createdAtSeconds"] = .double(registration.createdAt.timeIntervalSince1970)
        }
        return .object(object)
    }

    /// The counters as the API shows them.
    public static func counters(_ counters: WebhookCounters, backlog: Int64, inFlight: Bool, deadLetters: Int) -> JSONValue {
        var object: [String: JSONValue] = [
            "delivered": .integer(counters.delivered), "failedAttempts": .integer(counters.failedAttempts),
            "deadLettered": .integer(counters.deadLettered), "deadLetters": .integer(Int64(deadLetters)),
            "pending": .integer(backlog + (inFlight ? 1 : 0)), "inFlight": .bool(inFlight),
        ]
        object["lastError"] = counters.lastError.map { .string($0) } ?? .null
        object["lastErrorAt"] = counters.lastErrorAt.map { .string(RFC3339.string(from: $0)) } ?? .null
        object["lastSuccessAt"] = counters.lastSuccessAt.map { .string(RFC3339.string(from: $0)) } ?? .null
        return .object(object)
    }

    /// A dead letter as the API shows it.
    public static func deadLetter(_ letter: DeadLetter) -> JSONValue {
        .object([
            "sequence": .integer(letter.sequence), "eventId": .string(letter.eventID),
            "attempts": .integer(Int64(letter.attempts)),
            "firstAttemptAt": .string(RFC3339.string(from: letter.firstAttemptAt)),
            "failedAt": .string(RFC3339.string(from: letter.failedAt)),
            "lastError": .string(letter.lastError), "redriveRequested": .bool(letter.redriveRequested),
        ])
    }

    // MARK: Storage documents (exact: dates as seconds since 1970)

    static func storedRegistration(_ value: JSONValue) throws(WebhookError) -> WebhookRegistration {
        guard let id = value["id"]?.stringValue, let url = value["url"]?.stringValue,
              let secret = value["secret"]?.stringValue, let created = value["createdAtSeconds"]?.doubleValue else {
            throw WebhookError(.storageFailure, "a stored webhook registration is incomplete: \(JSONWriter().string(value))")
        }
        return WebhookRegistration(id: id, url: url, filter: try parseFilter(value["filter"]), secret: secret,
                                   createdAt: Date(timeIntervalSince1970: created))
    }

    static func storedState(_ state: WebhookDeliveryState) -> JSONValue {
        var object: [String: JSONValue] = ["cursor": .integer(state.cursor)]
        let c = state.counters
        object["delivered"] = .integer(c.delivered)
        object["failedAttempts"] = .integer(c.failedAttempts)
        object["deadLettered"] = .integer(c.deadLettered)
        if let text = c.lastError { object["lastError"] = .string(text) }
        if let date = c.lastErrorAt { object["lastErrorAt"] = .double(date.timeIntervalSince1970) }
        if let date = c.lastSuccessAt { object["lastSuccessAt"] = .double(date.timeIntervalSince1970) }
        if let p = state.pending {
            object["pending"] = .object([
                "sequence": .integer(p.sequence), "redrive": .bool(p.isRedrive), "attempts": .integer(Int64(p.attempts)),
                "firstAttemptAt": .double(p.firstAttemptAt.timeIntervalSince1970),
                "nextAttemptAt": .double(p.nextAttemptAt.timeIntervalSince1970), "lastError": .string(p.lastError),
            ])
        }
        return .object(object)
    }

    static func storedState(_ value: JSONValue) throws(WebhookError) -> WebhookDeliveryState {
        guard let cursor = value["cursor"]?.int64Value else {
            throw WebhookError(.storageFailure, "a stored webhook state has no cursor: \(JSONWriter().string(value))")
        }
        var counters = WebhookCounters()
        counters.delivered = value["delivered"]?.int64Value ?? 0
        counters.failedAttempts = value["failedAttempts"]?.int64Value ?? 0
        counters.deadLettered = value["deadLettered"]?.int64Value ?? 0
        counters.lastError = value["lastError"]?.stringValue
        counters.lastErrorAt = value["lastErrorAt"]?.doubleValue.map(Date.init(timeIntervalSince1970:))
        counters.lastSuccessAt = value["lastSuccessAt"]?.doubleValue.map(Date.init(timeIntervalSince1970:))
        var pending: PendingDelivery?
        if let p = value["pending"], !p.isNull {
            guard let sequence = p["sequence"]?.int64Value, let attempts = p["attempts"]?.int64Value,
                  let first = p["firstAttemptAt"]?.doubleValue, let next = p["nextAttemptAt"]?.doubleValue else {
                throw WebhookError(.storageFailure, "a stored pending delivery is incomplete: \(JSONWriter().string(p))")
            }
            pending = PendingDelivery(sequence: sequence, isRedrive: p["redrive"]?.boolValue ?? false, attempts: Int(attempts),
                                      firstAttemptAt: Date(timeIntervalSince1970: first),
                                      nextAttemptAt: Date(timeIntervalSince1970: next),
                                      lastError: p["lastError"]?.stringValue ?? "")
        }
        return WebhookDeliveryState(cursor: cursor, pending: pending, counters: counters)
    }

    static func storedDeadLetter(_ letter: DeadLetter) -> JSONValue {
        .object([
            "sequence": .integer(letter.sequence), "eventId": .string(letter.eventID),
            "attempts": .integer(Int64(letter.attempts)),
            "firstAttemptAt": .double(letter.firstAttemptAt.timeIntervalSince1970),
            "failedAt": .double(letter.failedAt.timeIntervalSince1970), "lastError": .string(letter.lastError),
        ])
    }

    static func storedDeadLetter(_ value: JSONValue, redrive: Bool) throws(WebhookError) -> DeadLetter {
        guard let sequence = value["sequence"]?.int64Value, let eventID = value["eventId"]?.stringValue,
              let attempts = value["attempts"]?.int64Value, let first = value["firstAttemptAt"]?.doubleValue,
              let failed = value["failedAt"]?.doubleValue else {
            throw WebhookError(.storageFailure, "a stored dead letter is incomplete: \(JSONWriter().string(value))")
        }
        return DeadLetter(sequence: sequence, eventID: eventID, attempts: Int(attempts),
                          firstAttemptAt: Date(timeIntervalSince1970: first), failedAt: Date(timeIntervalSince1970: failed),
                          lastError: value["lastError"]?.stringValue ?? "", redriveRequested: redrive)
    }
}
