import Foundation
import PerimeterService

/// The delivery loop of one webhook, on its own thread (blocking socket I/O stays off the Swift
/// concurrency pool).
///
/// Thread safety: `state`, `buffer` and `emptyReads` are touched only by the worker's thread (and
/// `state` is published to other threads through `published`, under `condition`); the wake and stop
/// flags are guarded by `condition`. Hence `@unchecked Sendable`.
final class WebhookWorker: @unchecked Sendable {
    let registration: WebhookRegistration
    let dispatcher: WebhookDispatchContext
    private let condition = NSCondition()
    private var stopRequested = false
    private var woken = false
    private var finished = false
    private var published: WebhookDeliveryState

    private var state: WebhookDeliveryState
    private var buffer: [GeofencingEvent] = []
    private var bufferIndex = 0
    private var emptyReads = 0
    private var cursorDirty = false

    init(webhook: StoredWebhook, context: WebhookDispatchContext) {
        self.registration = webhook.registration
        self.dispatcher = context
        self.state = webhook.state
        self.published = webhook.state
    }

    func launch() {
        let thread = Thread { [self] in run() }
        thread.name = "webhook \(registration.id)"
        thread.start()
    }

    func wake() {
        condition.lock()
        woken = true
        condition.signal()
        condition.unlock()
    }

    func requestStop() {
        condition.lock()
        stopRequested = true
        condition.signal()
        condition.unlock()
    }

    func waitUntilFinished() {
        condition.lock()
        while !finished { condition.wait() }
        condition.unlock()
    }

    /// The latest state (for counters).
    func snapshot() -> WebhookDeliveryState {
        condition.lock()
        defer { condition.unlock() }
        return published
    }

    private var shouldStop: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopRequested
    }

    private func run() {
        while !shouldStop {
            let delay = step()
            guard delay > 0 else { continue }
            condition.lock()
            let deadline = Date().addingTimeInterval(delay)
            while !woken && !stopRequested && Date() < deadline {
                _ = condition.wait(until: deadline)
            }
            woken = false
            condition.unlock()
        }
        if cursorDirty { _ = persist { s, id throws(WebhookError) in try dispatcher.store.save(s, for: id) } }
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// One unit of work; returns how long to wait before the next (0: go on at once).
    private func step() -> TimeInterval {
        let now = dispatcher.now()
        if let pending = state.pending {
            let due = pending.nextAttemptAt.timeIntervalSince(now)
            if due > 0 { return due }
            switch event(at: pending.sequence) {
            case .found(let logged): return attempt(logged, redrive: pending.isRedrive, previous: pending)
            case .missing: return missing(pending.sequence, redrive: pending.isRedrive, eventID: nil, previous: pending)
            case .unreadable(let error): return storeFailed(error)
            }
        }
        let redrive: DeadLetter?
        do {
            redrive = try dispatcher.store.nextRedrive(for: registration.id)
        } catch {
            return storeFailed(error)
        }
        if let redrive {
            switch event(at: redrive.sequence) {
            case .found(let logged): return attempt(logged, redrive: true, previous: nil)
            case .missing: return missing(redrive.sequence, redrive: true, eventID: redrive.eventID, previous: nil)
            case .unreadable(let error): return storeFailed(error)
            }
        }
        return nextFromLog()
    }

    /// Skips non-matching events and attempts the first matching one after the cursor.
    private func nextFromLog() -> TimeInterval {
        while true {
            if bufferIndex >= buffer.count {
                do {
                    buffer = try dispatcher.service.loggedEvents(after: state.cursor, limit: dispatcher.configuration.batchSize)
                } catch {
                    return storeFailed(WebhookError(.storageFailure, "reading the event log failed: \(error.message)"))
                }
                bufferIndex = 0
                if buffer.isEmpty {
                    if cursorDirty && !persist({ s, id throws(WebhookError) in try dispatcher.store.save(s, for: id) }) {
                        return 1
                    }
                    let idle = dispatcher.configuration.idlePollInterval
                    guard dispatcher.service.lastEventSequence > state.cursor else { emptyReads = 0; return idle }
                    // Events are numbered but not committed yet: poll again soon, backing off.
                    emptyReads += 1
                    return min(idle, 0.005 * pow(2, Double(min(emptyReads, 20))))
                }
                emptyReads = 0
            }
            let logged = buffer[bufferIndex]
            bufferIndex += 1
            guard logged.sequence > state.cursor else { continue }
            if registration.filter.matches(logged.event, group: logged.group) {
                return attempt(logged, redrive: false, previous: nil)
            }
            state.cursor = logged.sequence
            cursorDirty = true
        }
    }

    private enum Lookup {
        case found(GeofencingEvent)
        case missing
        case unreadable(WebhookError)
    }

    /// The logged event at `sequence`, from the buffer or the log.
    private func event(at sequence: Int64) -> Lookup {
        if let hit = buffer.last(where: { $0.sequence == sequence }) { return .found(hit) }
        do {
            guard let found = try dispatcher.service.loggedEvents(after: sequence - 1, limit: 1).first,
                  found.sequence == sequence else { return .missing }
            return .found(found)
        } catch {
            return .unreadable(WebhookError(.storageFailure, "reading event \(sequence) from the event log failed: \(error.message)"))
        }
    }

    /// Sends `logged` once and records the outcome.
    private func attempt(_ logged: GeofencingEvent, redrive: Bool, previous: PendingDelivery?) -> TimeInterval {
        let body = dispatcher.encoder.body(for: logged)
        let started = dispatcher.now()
        let headers = dispatcher.encoder.headers(for: logged, body: body, webhookID: registration.id,
                                                 secret: registration.secret, now: started)
        var failure: String?
        do {
            let target = try WebhookTarget(url: registration.url)
            let status = try dispatcher.transport.post(to: target, headers: headers, body: body)
            if !(200...299).contains(status) { failure = "HTTP \(status) from \(target.hostHeader)" }
        } catch {
            failure = error.message
        }
        let finishedAt = dispatcher.now()
        guard let failure else {
            state.pending = nil
            state.counters.delivered += 1
            state.counters.lastSuccessAt = finishedAt
            let saved: Bool
            if redrive {
                saved = persist { s, id throws(WebhookError) in try dispatcher.store.save(s, for: id, removingDeadLetter: logged.sequence) }
            } else {
                state.cursor = logged.sequence
                saved = persist { s, id throws(WebhookError) in try dispatcher.store.save(s, for: id) }
            }
            dispatcher.onOutcome?(registration.id, .delivered)
            return saved ? 0 : 1
        }
        return failed(sequence: logged.sequence, eventID: logged.event.id, redrive: redrive, previous: previous,
                      startedAt: started, at: finishedAt, error: failure)
    }

    /// Records a failed attempt: schedules a retry, or dead-letters when the window is over.
    private func failed(sequence: Int64, eventID: String, redrive: Bool, previous: PendingDelivery?, startedAt: Date,
                        at now: Date, error: String) -> TimeInterval {
        let attempts = (previous?.attempts ?? 0) + 1
        let first = previous?.firstAttemptAt ?? startedAt
        let delay = dispatcher.nextJitter(afterFailures: attempts)
        let next = now.addingTimeInterval(delay)
        state.counters.failedAttempts += 1
        state.counters.lastError = error
        state.counters.lastErrorAt = now
        if next.timeIntervalSince(first) > dispatcher.configuration.retryPolicy.retention {
            let letter = DeadLetter(sequence: sequence, eventID: eventID, attempts: attempts, firstAttemptAt: first,
                                    failedAt: now, lastError: error)
            state.pending = nil
            state.counters.deadLettered += 1
            if !redrive { state.cursor = max(state.cursor, sequence) }
            let saved = persist { s, id throws(WebhookError) in try dispatcher.store.save(s, for: id, deadLetter: letter) }
            dispatcher.onOutcome?(registration.id, .dead)
            return saved ? 0 : 1
        }
        state.pending = PendingDelivery(sequence: sequence, isRedrive: redrive, attempts: attempts, firstAttemptAt: first,
                                        nextAttemptAt: next, lastError: error)
        let saved = persist { s, id throws(WebhookError) in try dispatcher.store.save(s, for: id) }
        dispatcher.onOutcome?(registration.id, .failed)
        return saved ? delay : 1
    }

    /// The event at `sequence` is not in the log any more: dead-letter it (never drop it silently).
    private func missing(_ sequence: Int64, redrive: Bool, eventID: String?, previous: PendingDelivery?) -> TimeInterval {
        let now = dispatcher.now()
        let error = "event \(sequence) is not in the event log"
        let letter = DeadLetter(sequence: sequence, eventID: eventID ?? "", attempts: previous?.attempts ?? 0,
                                firstAttemptAt: previous?.firstAttemptAt ?? now, failedAt: now, lastError: error)
        state.pending = nil
        state.counters.lastError = error
        state.counters.lastErrorAt = now
        if !redrive {
            state.counters.deadLettered += 1
            state.cursor = max(state.cursor, sequence)
        }
        return persist({ s, id throws(WebhookError) in try dispatcher.store.save(s, for: id, deadLetter: letter) }) ? 0 : 1
    }

    /// Saves `state` with `save`; on failure records the error, reloads, and returns `false`.
    private func persist(_ save: (WebhookDeliveryState, String) throws(WebhookError) -> Void) -> Bool {
        do {
            try save(state, registration.id)
            cursorDirty = false
            condition.lock()
            published = state
            condition.unlock()
            return true
        } catch {
            _ = storeFailed(error)
            return false
        }
    }

    /// A store or log failure: stop when the webhook is gone, else reload the durable state and retry
    /// in a second.
    private func storeFailed(_ error: WebhookError) -> TimeInterval {
        if error.code == .notFound {
            requestStop()
            return 0
        }
        do {
            guard let stored = try dispatcher.store.webhook(id: registration.id) else {
                requestStop()  // unregistered meanwhile
                return 0
            }
            // Resume from what is durable: at worst the last acknowledged event is sent again.
            state = stored.state
            cursorDirty = false
        } catch {
            // The webhook store itself is unavailable: keep the state in memory and retry later.
        }
        state.counters.lastError = error.message
        state.counters.lastErrorAt = dispatcher.now()
        buffer = []
        bufferIndex = 0
        condition.lock()
        published = state
        condition.unlock()
        return 1
    }
}
