import Foundation
import Testing
import PerimeterTestSupport
@testable import PerimeterWebhooks

/// The obvious model of a webhook store: plain arrays, searched linearly.
private struct Model {
    var webhooks: [StoredWebhook] = []
    var letters: [(id: String, letter: DeadLetter)] = []

    func has(_ id: String) -> Bool { webhooks.contains { $0.registration.id == id } }

    mutating func setState(_ state: WebhookDeliveryState, _ id: String) {
        for k in webhooks.indices where webhooks[k].registration.id == id { webhooks[k].state = state }
    }

    func deadLetters(_ id: String, after: Int64, limit: Int) -> [DeadLetter] {
        Array(letters.filter { $0.id == id && $0.letter.sequence > after }.map(\.letter)
            .sorted { $0.sequence < $1.sequence }.prefix(limit))
    }
}

@Suite("WebhookStore against a model (seeded random operations)")
struct StorePropertyTests {
    @Test(arguments: StoreKind.allCases)
    func randomOperationsMatchTheModel(kind: StoreKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.make(folder)
        var model = Model()
        var rng = SplitMix64(seed: kind == .memory ? 11 : 12)
        let ids = ["w1", "w2", "w3"]
        func date() -> Date { Date(timeIntervalSince1970: Double(Int.random(in: 0...1_000_000, using: &rng)) / 8) }
        for step in 0..<400 {
            let id = ids.randomElement(using: &rng)!
            var state = WebhookDeliveryState(cursor: Int64.random(in: 0...50, using: &rng))
            state.counters.delivered = Int64.random(in: 0...9, using: &rng)
            if Bool.random(using: &rng) { state.counters.lastError = "e\(step)"; state.counters.lastErrorAt = date() }
            if Bool.random(using: &rng) {
                state.pending = PendingDelivery(sequence: state.cursor + 1, isRedrive: Bool.random(using: &rng), attempts: 2,
                                                firstAttemptAt: date(), nextAttemptAt: date(), lastError: "x")
            }
            let letter = DeadLetter(sequence: Int64.random(in: 1...20, using: &rng), eventID: "ev\(step)", attempts: step,
                                    firstAttemptAt: date(), failedAt: date(), lastError: "l\(step)")
            var outcome: WebhookError.Code?
            var expected: WebhookError.Code?
            do {
                switch Int.random(in: 0..<7, using: &rng) {
                case 0:
                    let registration = WebhookRegistration(id: id, url: "http://e.test/\(step)", secret: "s\(step)-0123456789abcdef",
                                                           createdAt: date())
                    if model.has(id) { expected = .conflict } else {
                        model.webhooks.append(StoredWebhook(registration: registration, state: state))
                    }
                    try store.insert(registration, state: state)
                case 1:
                    let existed = model.has(id)
                    model.webhooks.removeAll { $0.registration.id == id }
                    model.letters.removeAll { $0.id == id }
                    #expect(try store.delete(id: id) == existed)
                case 2:
                    if model.has(id) { model.setState(state, id) } else { expected = .notFound }
                    try store.save(state, for: id)
                case 3:
                    if model.has(id) {
                        model.setState(state, id)
                        model.letters.removeAll { $0.id == id && $0.letter.sequence == letter.sequence }
                        model.letters.append((id, letter))
                    } else { expected = .notFound }
                    try store.save(state, for: id, deadLetter: letter)
                case 4:
                    if model.has(id) {
                        model.setState(state, id)
                        model.letters.removeAll { $0.id == id && $0.letter.sequence == letter.sequence }
                    } else { expected = .notFound }
                    try store.save(state, for: id, removingDeadLetter: letter.sequence)
                case 5:
                    let wanted: [Int64]? = Bool.random(using: &rng) ? nil : (0..<3).map { _ in Int64.random(in: 1...20, using: &rng) }
                    var count = 0
                    if model.has(id) {
                        for k in model.letters.indices where model.letters[k].id == id
                            && (wanted.map { $0.contains(model.letters[k].letter.sequence) } ?? true) {
                            model.letters[k].letter.redriveRequested = true
                            count += 1
                        }
                    } else { expected = .notFound }
                    let marked = try store.requestRedrive(for: id, sequences: wanted)
                    #expect(marked == count, "step \(step)")
                default:
                    let after = Int64.random(in: 0...20, using: &rng), limit = Int.random(in: 0...6, using: &rng)
                    #expect(try store.deadLetters(for: id, after: after, limit: limit) == model.deadLetters(id, after: after, limit: limit),
                            "step \(step)")
                }
            } catch {
                outcome = error.code
            }
            #expect(outcome == expected, "step \(step)")
            // Full comparison after every step.
            #expect(try store.webhooks() == model.webhooks, "step \(step)")
            for other in ids {
                #expect(try store.deadLetterCount(for: other) == model.letters.filter { $0.id == other }.count, "step \(step)")
                #expect(try store.nextRedrive(for: other) == model.deadLetters(other, after: Int64.min, limit: 100).first(where: \.redriveRequested),
                        "step \(step)")
                #expect(try store.webhook(id: other) == model.webhooks.first { $0.registration.id == other }, "step \(step)")
            }
        }
    }
}
