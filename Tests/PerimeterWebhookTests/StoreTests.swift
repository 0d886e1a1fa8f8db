import Foundation
import PerimeterSQLite
import Testing
import PerimeterTestSupport
@testable import PerimeterWebhooks

/// The stores under test; SQLite ones use a fresh file each.
enum StoreKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case memory, sqlite
    var testDescription: String { rawValue }

    func make(_ folder: TemporaryFolder) throws -> any WebhookStore {
        switch self {
        case .memory: InMemoryWebhookStore()
        case .sqlite: try SQLiteWebhookStore(path: folder.path("hooks.sqlite"))
        }
    }
}

private func registration(_ id: String, created: Double = 1_700_000_000.25) -> WebhookRegistration {
    WebhookRegistration(id: id, url: "http://example.com/\(id)",
                        filter: WebhookFilter(devices: ["d1"], fences: ["a", "b"], groups: ["g"], types: [.entry, .exit]),
                        secret: "secret-\(id)-0123456789", createdAt: Date(timeIntervalSince1970: created))
}

@Suite("WebhookStore conformance")
struct StoreTests {
    @Test(arguments: StoreKind.allCases)
    func registrationsRoundTrip(kind: StoreKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.make(folder)
        #expect(try store.webhooks().isEmpty)
        try store.insert(registration("w1"), state: WebhookDeliveryState(cursor: 5))
        try store.insert(registration("w0"), state: WebhookDeliveryState(cursor: 0))
        #expect(try store.webhooks().map(\.registration.id) == ["w1", "w0"])  // registration order
        #expect(try store.webhook(id: "w1") == StoredWebhook(registration: registration("w1"), state: WebhookDeliveryState(cursor: 5)))
        #expect(try store.webhook(id: "nope") == nil)
        do {
            try store.insert(registration("w1"), state: WebhookDeliveryState(cursor: 0))
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.code == .conflict)
        }
        #expect(try store.delete(id: "w1"))
        #expect(try !store.delete(id: "w1"))
        #expect(try store.webhooks().map(\.registration.id) == ["w0"])
    }

    @Test(arguments: StoreKind.allCases)
    func stateAndDeadLetters(kind: StoreKind) throws {
        let folder = TemporaryFolder()
        let store = try kind.make(folder)
        try store.insert(registration("w"), state: WebhookDeliveryState(cursor: 0))
        var state = WebhookDeliveryState(cursor: 7)
        state.counters.delivered = 3
        state.counters.failedAttempts = 9
        state.counters.lastError = "HTTP 500"
        state.counters.lastErrorAt = Date(timeIntervalSince1970: 1_700_000_100.5)
        state.counters.lastSuccessAt = Date(timeIntervalSince1970: 1_700_000_050.125)
        state.pending = PendingDelivery(sequence: 8, isRedrive: false, attempts: 2, firstAttemptAt: Date(timeIntervalSince1970: 1_700_000_000),
                                        nextAttemptAt: Date(timeIntervalSince1970: 1_700_000_002.75), lastError: "timeout")
        try store.save(state, for: "w")
        #expect(try store.webhook(id: "w")?.state == state)

        let letters = (1...5).map { i in
            DeadLetter(sequence: Int64(i * 10), eventID: "e\(i)", attempts: i, firstAttemptAt: Date(timeIntervalSince1970: 1_000),
                       failedAt: Date(timeIntervalSince1970: 2_000 + Double(i)), lastError: "err \(i)")
        }
        for letter in letters.reversed() {
            state.counters.deadLettered += 1
            try store.save(state, for: "w", deadLetter: letter)
        }
        #expect(try store.deadLetterCount(for: "w") == 5)
        #expect(try store.deadLetters(for: "w", after: 0, limit: 100) == letters)
        #expect(try store.deadLetters(for: "w", after: 20, limit: 2) == Array(letters[2...3]))
        #expect(try store.webhook(id: "w")?.state.counters.deadLettered == 5)
        #expect(try store.nextRedrive(for: "w") == nil)

        #expect(try store.requestRedrive(for: "w", sequences: [40, 20, 999]) == 2)
        #expect(try store.nextRedrive(for: "w")?.sequence == 20)
        #expect(try store.deadLetters(for: "w", after: 0, limit: 100).filter(\.redriveRequested).map(\.sequence) == [20, 40])
        state.counters.delivered += 1
        try store.save(state, for: "w", removingDeadLetter: 20)
        #expect(try store.nextRedrive(for: "w")?.sequence == 40)
        #expect(try store.deadLetterCount(for: "w") == 4)
        #expect(try store.webhook(id: "w")?.state.counters.delivered == 4)
        // Re-dead-lettering replaces the letter and clears the redrive mark.
        var again = letters[3]
        again.attempts = 99
        try store.save(state, for: "w", deadLetter: again)
        #expect(try store.nextRedrive(for: "w") == nil)
        #expect(try store.deadLetters(for: "w", after: 39, limit: 1).first?.attempts == 99)
        #expect(try store.requestRedrive(for: "w", sequences: nil) == 4)

        #expect(try store.delete(id: "w"))
        #expect(try store.deadLetterCount(for: "w") == 0)
        for call in [{ try store.save(state, for: "w") }, { _ = try store.requestRedrive(for: "w", sequences: nil) }] {
            do {
                try call()
                Issue.record("no error for a deleted webhook")
            } catch let error as WebhookError {
                #expect(error.code == .notFound)
            }
        }
    }

    @Test func sqliteSurvivesReopen() throws {
        let folder = TemporaryFolder()
        let path = folder.path("hooks.sqlite")
        do {
            let store = try SQLiteWebhookStore(path: path)
            try store.insert(registration("w"), state: WebhookDeliveryState(cursor: 42))
            try store.save(WebhookDeliveryState(cursor: 43), for: "w",
                           deadLetter: DeadLetter(sequence: 7, eventID: "e", attempts: 3, firstAttemptAt: Date(timeIntervalSince1970: 1),
                                                  failedAt: Date(timeIntervalSince1970: 2), lastError: "x"))
            store.close()
        }
        let reopened = try SQLiteWebhookStore(path: path)
        #expect(try reopened.webhook(id: "w")?.state.cursor == 43)
        #expect(try reopened.webhook(id: "w")?.registration == registration("w"))
        #expect(try reopened.deadLetters(for: "w", after: 0, limit: 10).map(\.eventID) == ["e"])
    }

    @Test func sqliteRefusesForeignFiles() throws {
        let folder = TemporaryFolder()
        let path = folder.path("state.sqlite")
        _ = try SQLiteGeofencingStore(path: path)  // a geofencing store, not a webhook store
        #expect(throws: (any Error).self) { try SQLiteWebhookStore(path: path) }
        try Data("not a database at all, definitely not".utf8).write(to: URL(fileURLWithPath: folder.path("junk")))
        #expect(throws: (any Error).self) { try SQLiteWebhookStore(path: folder.path("junk")) }
    }

    @Test func closedSQLiteStoreReportsStorageFailure() throws {
        let folder = TemporaryFolder()
        let store = try SQLiteWebhookStore(path: folder.path("hooks.sqlite"))
        store.close()
        do {
            _ = try store.webhooks()
            Issue.record("closed store answered")
        } catch {
            #expect(error.code == .storageFailure)
        }
    }
}
