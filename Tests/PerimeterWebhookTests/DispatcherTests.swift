import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import PerimeterSQLite
import Testing
import PerimeterTestSupport
@testable import PerimeterWebhooks

private let secret = "test-secret-0123456789"

/// Fast retries for tests: jitter up to 10–40 ms, a short response timeout, loopback allowed.
private func configuration(retention: Double = 120) -> WebhookDispatcher.Configuration {
    WebhookDispatcher.Configuration(
        retryPolicy: WebhookRetryPolicy(initialDelay: 0.01, maximumDelay: 0.04, multiplier: 2, retention: retention),
        allowPrivateTargets: true, connectTimeout: 1, responseTimeout: 0.25, idlePollInterval: 0.05, batchSize: 7,
        jitterSeed: 1234)
}

/// Checks what a receiver saw: signatures, CloudEvent ids = Idempotency-Key, 2xx deliveries in log order.
private func verify(_ receiver: LoopbackReceiver, expected: [GeofencingEvent], allowedDuplicates: Int = 0,
                    sourceLocation: SourceLocation = #_sourceLocation) throws {
    for request in receiver.requests {
        #expect(request.method == "POST", sourceLocation: sourceLocation)
        #expect(request.headers["content-type"] == "application/cloudevents+json", sourceLocation: sourceLocation)
        let signature = try #require(request.headers["perimeter-signature"], sourceLocation: sourceLocation)
        #expect(WebhookSignature.verify(headerValue: signature, body: request.body, secret: secret, now: request.receivedAt), sourceLocation: sourceLocation)
        let body = try JSONParser().parse(request.body)
        #expect(body["id"]?.stringValue == request.headers["idempotency-key"], sourceLocation: sourceLocation)
        #expect(body["specversion"] == "1.0", sourceLocation: sourceLocation)
    }
    // Deduplicate by Idempotency-Key as a receiver would: the result is exactly the log, in order.
    var seen = Set<String>()
    var unique: [String] = []
    for request in receiver.delivered {
        let key = request.headers["idempotency-key"] ?? ""
        if seen.insert(key).inserted { unique.append(key) }
    }
    #expect(unique == expected.map(\.event.id), sourceLocation: sourceLocation)
    #expect(receiver.delivered.count - unique.count <= allowedDuplicates, sourceLocation: sourceLocation)
    // Every attempt of an event carries the same id and body.
    var bodies: [String: [UInt8]] = [:]
    for request in receiver.requests {
        let key = request.headers["idempotency-key"] ?? ""
        if let previous = bodies[key] { #expect(previous == request.body, sourceLocation: sourceLocation) }
        bodies[key] = request.body
    }
}

@Suite("WebhookDispatcher against a real loopback receiver", .serialized)
struct DispatcherTests {
    @Test("logged events wake an idle worker at once, not at its next poll; a stopped dispatcher no longer observes")
    func loggedEventsWakeIdleWorkers() throws {
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let service = try makeService()
        var slow = configuration()
        slow.idlePollInterval = 60
        let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(), configuration: slow)
        try dispatcher.start()
        _ = try dispatcher.register(url: receiver.url, secret: secret)
        Thread.sleep(forTimeInterval: 0.3)  // the worker has found the log empty and sleeps for 60 s
        let events = try drive(service, device: "d1", visits: 1, start: 0)
        #expect(events.count == 2)
        #expect(eventually(10) { receiver.delivered.count >= 2 }, "delivered only \(receiver.delivered.count) of 2 within 10 s")
        try verify(receiver, expected: events)
        dispatcher.stop()
        _ = try drive(service, device: "d1", visits: 1, start: 100)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(receiver.delivered.count == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func deliversEveryEventInOrderThroughFailures(kind: StoreKind) throws {
        let folder = TemporaryFolder()
        // Fails, times out, drops the connection, returns 500/503, then recovers; later failures are sprinkled in.
        let counter = Locked(0)
        let receiver = try LoopbackReceiver(script: [.status(500), .hang(0.4), .close, .status(503), .status(404)]) { _ in
            let n = counter.withLock { n -> Int in n += 1; return n }
            return n % 5 == 0 ? .status(500) : .status(204)
        }
        defer { receiver.stop() }
        let filtered = try LoopbackReceiver()
        defer { filtered.stop() }
        let service = try makeService()
        let outcomes = Locked<[String: Int]>([:])
        let dispatcher = try WebhookDispatcher(service: service, store: try kind.make(folder), configuration: configuration(),
                                               onOutcome: { id, outcome in outcomes.withLock { $0["\(id) \(outcome.rawValue)", default: 0] += 1 } })
        try dispatcher.start()
        defer { dispatcher.stop() }
        let all = try dispatcher.register(url: receiver.url, secret: secret)
        let onlyD2Entries = try dispatcher.register(url: filtered.url, filter: WebhookFilter(devices: ["d2"], types: [.entry]), secret: secret)

        var events: [GeofencingEvent] = []
        for round in 0..<4 {
            for device in ["d1", "d2", "d3"] {
                events += try drive(service, device: device, visits: 1, start: Double(round * 1000))
            }
        }
        #expect(events.count == 24)
        #expect(eventually { receiver.delivered.count >= events.count && (try? dispatcher.webhook(id: all.id).counters.delivered) == 24 })
        let expectedFiltered = events.filter { $0.event.device == "d2" && $0.event.kind == .entry }
        #expect(eventually { filtered.delivered.count >= expectedFiltered.count })
        let status = try dispatcher.webhook(id: all.id)
        // A 2xx that reached the dispatcher after its 0.25 s response timeout (a loaded machine) counts as
        // a failed attempt and is sent again: at least once, so each such late success is one duplicate.
        let unanswered = receiver.requests.count - receiver.delivered.count
        let lateSuccesses = Int(status.counters.failedAttempts) - unanswered
        #expect(lateSuccesses >= 0, "every request not answered with a 2xx is a failed attempt")
        try verify(receiver, expected: events, allowedDuplicates: lateSuccesses)
        try verify(filtered, expected: expectedFiltered)

        #expect(status.counters.delivered == 24)
        #expect(status.counters.failedAttempts >= 5)
        #expect(status.counters.lastError != nil && status.counters.lastSuccessAt != nil)
        #expect(status.cursor == service.lastEventSequence && status.backlog == 0 && status.inFlight == nil)
        #expect(status.deadLetters == 0)
        #expect(eventually { outcomes.current["\(all.id) delivered"] == 24 })  // reported just after the save
        #expect(outcomes.current["\(all.id) failed"] == Int(status.counters.failedAttempts))
        #expect(outcomes.current["\(all.id) dead"] == nil)
        let metrics = try dispatcher.metricsText()
        #expect(metrics.contains("perimeter_webhook_events_total{webhook=\"\(all.id)\",outcome=\"delivered\"} 24\n"))
        #expect(metrics.contains("perimeter_webhook_backlog{webhook=\"\(all.id)\"} 0\n"))
        #expect(metrics.contains("perimeter_webhook_retry_window_seconds 120.0\n"))
        let json = JSONWriter().string(status.json)
        #expect(json.contains("\"delivered\":24") && !json.contains(secret))
        #expect(eventually { (try? dispatcher.webhook(id: onlyD2Entries.id).cursor) == service.lastEventSequence })
    }

    @Test func crashMidDeliveryResendsOnlyTheInFlightEventWithTheSameID() throws {
        let folder = TemporaryFolder()
        let servicePath = folder.path("state.sqlite"), hooksPath = folder.path("hooks.sqlite")
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }

        var service = try makeService(store: try SQLiteGeofencingStore(path: servicePath))
        let hooks = try SQLiteWebhookStore(path: hooksPath)
        // The process "dies" right after the receiver acknowledged the 6th event: that cursor save fails,
        // and so does every store call after it.
        let crashing = CrashingStore(hooks, failAfterSaves: 5)
        let first = try WebhookDispatcher(service: service, store: crashing, configuration: configuration())
        let id = try first.register(url: receiver.url, secret: secret).id
        try first.start()
        var events = try drive(service, device: "d1", visits: 3, start: 0)
        events += try drive(service, device: "d2", visits: 2, start: 0)
        #expect(eventually { crashing.crashed && receiver.delivered.count >= 6 })
        first.stop()
        hooks.close()
        try service.close()

        // Restart: new service and dispatcher over the same files; more events arrive meanwhile.
        service = try makeService(store: try SQLiteGeofencingStore(path: servicePath))
        events += try drive(service, device: "d3", visits: 2, start: 5000)
        let reopened = try SQLiteWebhookStore(path: hooksPath)
        #expect(try reopened.webhook(id: id)?.state.cursor == events[4].sequence)
        let second = try WebhookDispatcher(service: service, store: reopened, configuration: configuration())
        try second.start()
        defer { second.stop() }
        #expect(eventually { receiver.delivered.count >= events.count + 1 })
        try verify(receiver, expected: events, allowedDuplicates: 1)
        // Exactly the in-flight event was sent twice, with the same id.
        let keys = receiver.delivered.map { $0.headers["idempotency-key"] ?? "" }
        #expect(keys.count == events.count + 1)
        #expect(keys[5] == events[5].event.id && keys[6] == events[5].event.id)
    }

    @Test func gracefulRestartLosesNothingAndDuplicatesNothing() throws {
        let folder = TemporaryFolder()
        let receiver = try LoopbackReceiver(script: [.status(500), .status(500)])
        defer { receiver.stop() }
        let service = try makeService()
        let hooksPath = folder.path("hooks.sqlite")
        var events: [GeofencingEvent] = []
        var id = ""
        do {
            let store = try SQLiteWebhookStore(path: hooksPath)
            let dispatcher = try WebhookDispatcher(service: service, store: store, configuration: configuration())
            id = try dispatcher.register(url: receiver.url, secret: secret).id
            try dispatcher.start()
            events += try drive(service, device: "d1", visits: 4, start: 0)
            #expect(eventually { receiver.delivered.count >= 3 })
            dispatcher.stop()
            store.close()
        }
        events += try drive(service, device: "d1", visits: 2, start: 10_000)  // while nothing runs
        let store = try SQLiteWebhookStore(path: hooksPath)
        let dispatcher = try WebhookDispatcher(service: service, store: store, configuration: configuration())
        try dispatcher.start()
        defer { dispatcher.stop() }
        #expect(eventually { receiver.delivered.count >= events.count })
        try verify(receiver, expected: events, allowedDuplicates: 0)
        #expect(try dispatcher.webhook(id: id).counters.failedAttempts == 2)
    }

    @Test(arguments: StoreKind.allCases)
    func deadLettersAfterTheRetryWindowThenRedrives(kind: StoreKind) throws {
        let folder = TemporaryFolder()
        let down = Locked(true)
        let receiver = try LoopbackReceiver { _ in down.current ? .status(500) : .status(200) }
        defer { receiver.stop() }
        let service = try makeService()
        let dispatcher = try WebhookDispatcher(service: service, store: try kind.make(folder), configuration: configuration(retention: 0.15))
        try dispatcher.start()
        defer { dispatcher.stop() }
        let id = try dispatcher.register(url: receiver.url, secret: secret).id
        let failed = try drive(service, device: "d1", visits: 1, start: 0) + (try drive(service, device: "d2", visits: 1, start: 0))
        #expect(failed.count == 4)
        #expect(eventually { (try? dispatcher.webhook(id: id).deadLetters) == 4 })
        let letters = try dispatcher.deadLetters(id: id)
        #expect(letters.map(\.sequence) == failed.map(\.sequence))
        #expect(letters.map(\.eventID) == failed.map(\.event.id))
        #expect(letters.allSatisfy { $0.attempts >= 1 && $0.lastError.contains("HTTP 500") && !$0.redriveRequested })
        var status = try dispatcher.webhook(id: id)
        #expect(status.counters.deadLettered == 4 && status.counters.delivered == 0)
        #expect(status.cursor == failed.last!.sequence)
        #expect(receiver.delivered.isEmpty)

        // The receiver recovers: new events flow; dead letters stay until redriven.
        down.withLock { $0 = false }
        let later = try drive(service, device: "d3", visits: 1, start: 0)
        #expect(eventually { receiver.delivered.count >= later.count })
        #expect(try dispatcher.webhook(id: id).deadLetters == 4)

        #expect(try dispatcher.redrive(id: id, sequences: [failed[1].sequence]) == 1)
        #expect(eventually { (try? dispatcher.webhook(id: id).deadLetters) == 3 })
        #expect(try dispatcher.redrive(id: id) == 3)
        // Every redriven letter delivered and recorded (a delivery is recorded after the receiver answers).
        #expect(eventually { (try? dispatcher.webhook(id: id)).map { $0.deadLetters == 0 && $0.counters.delivered == 6 } == true })
        let keys = receiver.delivered.map { $0.headers["idempotency-key"] ?? "" }
        #expect(keys == later.map(\.event.id) + [failed[1].event.id, failed[0].event.id, failed[2].event.id, failed[3].event.id])
        status = try dispatcher.webhook(id: id)
        #expect(status.counters.delivered == 6)
        for request in receiver.requests {
            #expect(WebhookSignature.verify(headerValue: request.headers["perimeter-signature"] ?? "", body: request.body, secret: secret, now: request.receivedAt))
        }
    }

    @Test func registrationIsValidated() throws {
        let folder = TemporaryFolder()
        let service = try makeService()
        let guarded = try WebhookDispatcher(service: service, store: InMemoryWebhookStore())
        for url in ["http://127.0.0.1:8080/h", "http://localhost/", "http://192.168.0.10/", "http://169.254.169.254/"] {
            do {
                try guarded.register(url: url, secret: secret)
                Issue.record("\(url) accepted")
            } catch {
                #expect(error.code == .targetRefused && error.field == "url")
            }
        }
        #expect(try guarded.webhooks().isEmpty)

        let dispatcher = try WebhookDispatcher(service: service, store: try SQLiteWebhookStore(path: folder.path("h.sqlite")),
                                               configuration: configuration())
        let cases: [(() throws(WebhookError) -> Void, WebhookError.Code, String?)] = [
            ({ () throws(WebhookError) in try dispatcher.register(url: "ftp://x.test/", secret: secret) }, .invalidArgument, "url"),
            ({ () throws(WebhookError) in try dispatcher.register(url: "http://127.0.0.1:1/", secret: "short") }, .invalidArgument, "secret"),
            ({ () throws(WebhookError) in try dispatcher.register(url: "http://127.0.0.1:1/", secret: secret, id: "bad id") }, .invalidArgument, "id"),
            ({ () throws(WebhookError) in try dispatcher.register(url: "http://127.0.0.1:1/", secret: secret, startAfter: -1) }, .invalidArgument, "startAfter"),
            ({ () throws(WebhookError) in try dispatcher.unregister(id: "nope") }, .notFound, nil),
            ({ () throws(WebhookError) in _ = try dispatcher.webhook(id: "nope") }, .notFound, nil),
            ({ () throws(WebhookError) in _ = try dispatcher.deadLetters(id: "nope") }, .notFound, nil),
            ({ () throws(WebhookError) in _ = try dispatcher.redrive(id: "nope") }, .notFound, nil),
        ]
        for (call, code, field) in cases {
            do {
                try call()
                Issue.record("no error, expected \(code)")
            } catch {
                #expect(error.code == code && error.field == field, "\(error)")
            }
        }
        let created = try dispatcher.register(url: "http://127.0.0.1:1/", id: "mine")
        #expect(created.secret.count == 64 && created.id == "mine")
        do {
            try dispatcher.register(url: "http://127.0.0.1:1/", secret: secret, id: "mine")
            Issue.record("duplicate id accepted")
        } catch {
            #expect(error.code == .conflict)
        }
        let generated = try dispatcher.register(url: "http://127.0.0.1:1/", secret: secret)
        #expect(generated.id.hasPrefix("wh_") && generated.id.count == 27)
        #expect(try dispatcher.webhooks().map(\.registration.id) == ["mine", generated.id])
        try dispatcher.unregister(id: "mine")
        #expect(try dispatcher.webhooks().map(\.registration.id) == [generated.id])
        #expect(throws: WebhookError.self) { try dispatcher.deadLetters(id: generated.id, limit: 0) }
        #expect(throws: WebhookError.self) {
            try WebhookDispatcher(service: service, store: InMemoryWebhookStore(),
                                  configuration: .init(responseTimeout: 0))
        }
    }

    @Test func groupFilterAndUncommittedEvents() throws {
        let folder = TemporaryFolder()
        let south = try LoopbackReceiver()
        defer { south.stop() }
        // Group commit: events become visible in the log (and deliverable) only when committed.
        let service = GeofencingService(store: try SQLiteGeofencingStore(path: folder.path("state.sqlite")))
        try service.configure(GeofencingOptions(durability: .everyUpdates(1000)))
        try service.addFeatures([square("a", latitude: 10, longitude: 10, group: "north"),
                                 square("b", latitude: 20, longitude: 20, group: "south")])
        let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(), configuration: configuration())
        try dispatcher.start()
        defer { dispatcher.stop() }
        let id = try dispatcher.register(url: south.url, filter: WebhookFilter(groups: ["south"]), secret: secret).id
        var events: [GeofencingEvent] = []
        var time = 0.0
        for (lat, lon) in [(10.0, 10.0), (15.0, 15.0), (20.0, 20.0), (15.0, 15.0), (10.0, 10.0), (20.0, 20.0)] {
            events += try service.process(LocationUpdate(device: "d9", time: Date(timeIntervalSince1970: time), latitude: lat, longitude: lon))
            time += 60
        }
        let expected = events.filter { $0.event.fence == "b" }
        #expect(expected.count == 3 && events.count == 7)
        Thread.sleep(forTimeInterval: 0.2)  // room for a (wrong) early delivery; not a timing assertion
        #expect(south.requests.isEmpty)
        #expect(try dispatcher.webhook(id: id).backlog == 7)
        try service.flush()
        #expect(eventually { south.delivered.count >= expected.count })
        try verify(south, expected: expected)
        let groups = try south.delivered.map { try JSONParser().parse($0.body)["data"]?["group"]?.stringValue }
        #expect(groups == ["south", "south", "south"])
        #expect(eventually { (try? dispatcher.webhook(id: id).cursor) == events.last?.sequence })
    }

    @Test func retryScheduleSurvivesARestart() throws {
        let folder = TemporaryFolder()
        let down = Locked(true)
        let receiver = try LoopbackReceiver { _ in down.current ? .status(502) : .status(200) }
        defer { receiver.stop() }
        let service = try makeService()
        let path = folder.path("hooks.sqlite")
        var slow = configuration()
        slow.retryPolicy = WebhookRetryPolicy(initialDelay: 0.01, maximumDelay: 0.02, multiplier: 2, retention: 3600)
        let id: String
        let events: [GeofencingEvent]
        do {
            let store = try SQLiteWebhookStore(path: path)
            let dispatcher = try WebhookDispatcher(service: service, store: store, configuration: slow)
            id = try dispatcher.register(url: receiver.url, secret: secret).id
            try dispatcher.start()
            events = try drive(service, device: "d1", visits: 1, start: 0)
            #expect(eventually { receiver.requests.count >= 3 })
            dispatcher.stop()
            store.close()
        }
        let store = try SQLiteWebhookStore(path: path)
        let pending = try #require(try store.webhook(id: id)?.state.pending)
        #expect(pending.sequence == events[0].sequence && pending.attempts == receiver.requests.count && !pending.isRedrive)
        #expect(pending.lastError.contains("HTTP 502"))
        down.withLock { $0 = false }
        let attemptsBefore = receiver.requests.count
        let dispatcher = try WebhookDispatcher(service: service, store: store, configuration: slow)
        try dispatcher.start()
        defer { dispatcher.stop() }
        // The worker records a delivery after the receiver has answered: wait for the record too.
        #expect(eventually {
            receiver.delivered.count >= events.count
                && (try? dispatcher.webhook(id: id)).map { $0.counters.delivered == Int64(events.count) && $0.inFlight == nil } == true
        })
        try verify(receiver, expected: events)
        let status = try dispatcher.webhook(id: id)
        #expect(status.counters.failedAttempts == Int64(attemptsBefore))
        #expect(status.counters.delivered == Int64(events.count) && status.inFlight == nil)
    }

    @Test func droppingARunningDispatcherStopsItsWorkers() throws {
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let service = try makeService()
        var first: [GeofencingEvent] = []
        do {
            let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(), configuration: configuration())
            try dispatcher.start()
            try dispatcher.register(url: receiver.url, secret: secret)
            first = try drive(service, device: "d1", visits: 1, start: 0)
            #expect(eventually { receiver.delivered.count >= first.count })
        }  // released without stop(): deinit stops and joins the workers
        try drive(service, device: "d1", visits: 1, start: 1000)
        Thread.sleep(forTimeInterval: 0.2)  // room for a (wrong) delivery; not a timing assertion
        #expect(receiver.requests.count == first.count)
    }

    @Test func unregisterStopsDelivery() throws {
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let service = try makeService()
        let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(), configuration: configuration())
        try dispatcher.start()
        defer { dispatcher.stop() }
        let id = try dispatcher.register(url: receiver.url, secret: secret).id
        let first = try drive(service, device: "d1", visits: 1, start: 0)
        #expect(eventually { receiver.delivered.count >= first.count })
        try dispatcher.unregister(id: id)
        // A second webhook proves later events are dispatched at all; the removed one gets none.
        let other = try LoopbackReceiver()
        defer { other.stop() }
        try dispatcher.register(url: other.url, secret: secret)
        let second = try drive(service, device: "d1", visits: 1, start: 1000)
        #expect(eventually { other.delivered.count >= second.count })
        #expect(receiver.requests.count == first.count)
    }
}

/// Wraps a store and "crashes" after `failAfterSaves` successful state saves: every call fails from then on.
final class CrashingStore: WebhookStore, @unchecked Sendable {
    let base: any WebhookStore
    private let saves: Locked<Int>
    private let limit: Int

    init(_ base: any WebhookStore, failAfterSaves limit: Int) {
        self.base = base
        self.limit = limit
        self.saves = Locked(0)
    }

    var crashed: Bool { saves.current > limit }

    private func check() throws(WebhookError) {
        if crashed { throw WebhookError(.storageFailure, "crashed") }
    }

    private func countSave() throws(WebhookError) {
        let n = saves.withLock { n -> Int in n += 1; return n }
        if n > limit { throw WebhookError(.storageFailure, "crashed") }
    }

    func webhooks() throws(WebhookError) -> [StoredWebhook] { try check(); return try base.webhooks() }
    func webhook(id: String) throws(WebhookError) -> StoredWebhook? { try check(); return try base.webhook(id: id) }
    func insert(_ registration: WebhookRegistration, state: WebhookDeliveryState) throws(WebhookError) {
        try check(); try base.insert(registration, state: state)
    }
    func delete(id: String) throws(WebhookError) -> Bool { try check(); return try base.delete(id: id) }
    func save(_ state: WebhookDeliveryState, for id: String) throws(WebhookError) {
        try countSave(); try base.save(state, for: id)
    }
    func save(_ state: WebhookDeliveryState, for id: String, deadLetter: DeadLetter) throws(WebhookError) {
        try countSave(); try base.save(state, for: id, deadLetter: deadLetter)
    }
    func save(_ state: WebhookDeliveryState, for id: String, removingDeadLetter sequence: Int64) throws(WebhookError) {
        try countSave(); try base.save(state, for: id, removingDeadLetter: sequence)
    }
    func deadLetters(for id: String, after sequence: Int64, limit: Int) throws(WebhookError) -> [DeadLetter] {
        try check(); return try base.deadLetters(for: id, after: sequence, limit: limit)
    }
    func deadLetterCount(for id: String) throws(WebhookError) -> Int { try check(); return try base.deadLetterCount(for: id) }
    func requestRedrive(for id: String, sequences: [Int64]?) throws(WebhookError) -> Int {
        try check(); return try base.requestRedrive(for: id, sequences: sequences)
    }
    func nextRedrive(for id: String) throws(WebhookError) -> DeadLetter? { try check(); return try base.nextRedrive(for: id) }
}
