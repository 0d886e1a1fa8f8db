import Foundation
import PerimeterGeoJSON

extension WebhookJSON {
    /// A registration as the API shows it: `{"id","url","filter","createdAt"}`, never the secret.
    public static func registration(_ registration: WebhookRegistration) -> JSONValue {
        .object([
            "id": .string(registration.id), "url": .string(registration.url),
            "filter": filter(registration.filter), "createdAt": .string(RFC3339.string(from: registration.createdAt)),
        ])
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
}
