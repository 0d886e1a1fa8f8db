import Foundation
import PerimeterCrypto
import PerimeterService

extension WebhookDispatcher {
    /// Registers a webhook and starts delivering to it (when running). It receives events logged
    /// after `startAfter` (default: the current end of the log, i.e. from now on).
    ///
    /// - Parameters:
    ///   - secret: the signing key, 16–4096 bytes; `nil` generates 32 random bytes as 64 hex digits
    ///     (returned here, never shown again).
    ///   - id: the id; `nil` generates `wh_` + 24 hex digits.
    /// - Throws: ``WebhookError/Code/invalidArgument`` (field `url`, `secret`, `id`, `startAfter`),
    ///   ``WebhookError/Code/targetRefused`` (SSRF guard, unresolvable host), ``WebhookError/Code/conflict``.
    @discardableResult
    public func register(url: String, filter: WebhookFilter = WebhookFilter(), secret: String? = nil,
                         id: String? = nil, startAfter: Int64? = nil) throws(WebhookError) -> WebhookRegistration {
        let target = try WebhookTarget(url: url)
        _ = try TargetAddressPolicy(allowPrivateTargets: configuration.allowPrivateTargets).resolve(target)
        var generator = SystemRandomNumberGenerator()
        let key = secret ?? HMACSHA256.hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        guard (16...4096).contains(key.utf8.count) else {
            throw WebhookError(.invalidArgument, "secret must be 16 to 4096 bytes (got \(key.utf8.count)); omit it to have one generated", field: "secret")
        }
        let identifier = id ?? "wh_" + HMACSHA256.hex((0..<12).map { _ in UInt8.random(in: 0...255, using: &generator) })
        guard (1...128).contains(identifier.utf8.count),
              identifier.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a) || $0 == 0x2d || $0 == 0x5f }) else {
            throw WebhookError(.invalidArgument, "id must be 1 to 128 letters, digits, '-' or '_'", field: "id")
        }
        let last = service.lastEventSequence
        let cursor = startAfter ?? last
        guard cursor >= 0 else {
            throw WebhookError(.invalidArgument, "startAfter must be ≥ 0 (got \(cursor))", field: "startAfter")
        }
        let registration = WebhookRegistration(id: identifier, url: url, filter: filter, secret: key, createdAt: now())
        let state = WebhookDeliveryState(cursor: cursor)
        try store.insert(registration, state: state)
        if isRunning { startWorker(StoredWebhook(registration: registration, state: state)) }
        return registration
    }

    /// Unregisters a webhook: its worker stops (after an attempt in flight) and its state and dead
    /// letters are deleted. - Throws: ``WebhookError/Code/notFound``.
    public func unregister(id: String) throws(WebhookError) {
        guard try store.delete(id: id) else { throw WebhookError(.notFound, "no webhook with id \(id)") }
        let worker = workers.withLock { $0.removeValue(forKey: id) }
        worker?.requestStop()
    }

    /// Every webhook with its counters, in registration order.
    public func webhooks() throws(WebhookError) -> [WebhookStatus] {
        var result: [WebhookStatus] = []
        for stored in try store.webhooks() { result.append(try status(of: stored)) }
        return result
    }

    /// One webhook with its counters. - Throws: ``WebhookError/Code/notFound``.
    public func webhook(id: String) throws(WebhookError) -> WebhookStatus {
        guard let stored = try store.webhook(id: id) else { throw WebhookError(.notFound, "no webhook with id \(id)") }
        return try status(of: stored)
    }

    /// Up to `limit` (1…1000) dead letters after `sequence`, in sequence order.
    /// - Throws: ``WebhookError/Code/notFound``, ``WebhookError/Code/invalidArgument`` for a bad limit.
    public func deadLetters(id: String, after sequence: Int64 = 0, limit: Int = 100) throws(WebhookError) -> [DeadLetter] {
        guard (1...1000).contains(limit) else {
            throw WebhookError(.invalidArgument, "limit must be 1 to 1000 (got \(limit))", field: "limit")
        }
        guard try store.webhook(id: id) != nil else { throw WebhookError(.notFound, "no webhook with id \(id)") }
        return try store.deadLetters(for: id, after: sequence, limit: limit)
    }

    /// Requests redelivery of dead letters (`sequences`, or all when `nil`); returns how many were
    /// queued. Redriven events are sent before new log events, each with a fresh retry window; one that
    /// fails again for the whole window returns to the dead-letter list.
    /// - Throws: ``WebhookError/Code/notFound``.
    @discardableResult
    public func redrive(id: String, sequences: [Int64]? = nil) throws(WebhookError) -> Int {
        let count = try store.requestRedrive(for: id, sequences: sequences)
        if count > 0 { workers.withLock { $0[id] }?.wake() }
        return count
    }

    func status(of stored: StoredWebhook) throws(WebhookError) -> WebhookStatus {
        let id = stored.registration.id
        let live = workers.withLock { $0[id] }?.snapshot() ?? stored.state
        return WebhookStatus(registration: stored.registration, cursor: live.cursor,
                             backlog: max(0, service.lastEventSequence - live.cursor), inFlight: live.pending,
                             deadLetters: try store.deadLetterCount(for: id), counters: live.counters)
    }
}
