import Foundation
import PerimeterService
import Synchronization

/// Delivers the service's durable event log to registered webhooks: one worker thread per webhook reads
/// the log after the webhook's persisted cursor, in sequence order, and POSTs each matching event as a
/// signed CloudEvent, retrying with exponential backoff and full jitter for the retry window, then
/// dead-lettering it. Workers wake on the service's event stream (and poll the log as a safety net).
///
/// Guarantee (docs/webhooks.md): at-least-once, in log order per webhook. The cursor is persisted after
/// every acknowledged (2xx) event, before the next one is sent, so a crash or restart re-sends at
/// most the one event that was in flight, with the same id (`Idempotency-Key`).
///
/// ```swift
/// let dispatcher = try WebhookDispatcher(service: service, store: try SQLiteWebhookStore(path: "state.sqlite.webhooks"))
/// dispatcher.start()
/// let created = try dispatcher.register(url: "http://hooks.example.com/geo", filter: WebhookFilter(), secret: nil)
/// ```
public final class WebhookDispatcher: Sendable {
    /// What the workers share (they hold it, not the dispatcher, so dropping a dispatcher stops them).
    let context: WebhookDispatchContext
    let workers = Mutex<[String: WebhookWorker]>([:])
    var service: GeofencingService { context.service }
    var store: any WebhookStore { context.store }
    var configuration: Configuration { context.configuration }
    var now: @Sendable () -> Date { context.now }
    let lifecycle = Mutex<Lifecycle>(Lifecycle())

    struct Lifecycle {
        var running = false
        var wakeTask: Task<Void, Never>?
        /// Signalled when the wake task has left the event stream (its registration is removed then).
        var wakeTaskEnded: DispatchSemaphore?
    }

    /// Creates a dispatcher (not started).
    ///
    /// - Parameters:
    ///   - transport: how requests are sent; default ``WebhookHTTPClient`` with the configuration's
    ///     timeouts and SSRF policy.
    ///   - now: the clock (injectable for tests). Waits between attempts are real time.
    ///   - onOutcome: called on a worker thread after each attempt's outcome is saved, with the
    ///     webhook id (for example to feed server-wide metrics); keep it fast.
    /// - Throws: ``WebhookError/Code/invalidArgument`` for a bad configuration.
    public init(service: GeofencingService, store: any WebhookStore, configuration: Configuration = Configuration(),
                transport: (any WebhookTransport)? = nil,
                now: @escaping @Sendable () -> Date = { Date() },
                onOutcome: (@Sendable (_ webhookID: String, _ outcome: WebhookDeliveryOutcome) -> Void)? = nil) throws(WebhookError) {
        if let problem = configuration.validate() { throw problem }
        var system = SystemRandomNumberGenerator()
        context = WebhookDispatchContext(
            service: service, store: store, configuration: configuration,
            transport: transport ?? WebhookHTTPClient(
                policy: TargetAddressPolicy(allowPrivateTargets: configuration.allowPrivateTargets),
                connectTimeout: configuration.connectTimeout, responseTimeout: configuration.responseTimeout),
            encoder: CloudEventEncoder(source: configuration.source), now: now, onOutcome: onOutcome,
            jitterSeed: configuration.jitterSeed ?? system.next())
    }

    deinit { stop() }

    /// Whether ``start()`` was called and ``stop()`` was not.
    public var isRunning: Bool { lifecycle.withLock { $0.running } }

    /// Starts one worker per stored webhook and subscribes to the service's event stream (idempotent).
    /// - Throws: ``WebhookError/Code/storageFailure`` when the store cannot be read.
    public func start() throws(WebhookError) {
        let stored = try store.webhooks()
        let started = lifecycle.withLock { l -> Bool in
            guard !l.running else { return false }
            l.running = true
            return true
        }
        guard started else { return }
        for webhook in stored { startWorker(webhook) }
        let stream = service.events(bufferingPolicy: .bufferingNewest(1))
        let ended = DispatchSemaphore(value: 0)
        let task = Task.detached { [weak self] in
            defer { ended.signal() }
            for await _ in stream {
                guard let self else { return }
                self.wakeAll()
            }
        }
        lifecycle.withLock {
            $0.wakeTask = task
            $0.wakeTaskEnded = ended
        }
    }

    /// Stops every worker and waits for them: an attempt in flight finishes first (bounded by the
    /// timeouts) and its outcome is saved; the subscription to the service's event stream ends too.
    /// Delivery resumes from the store on the next ``start()``.
    public func stop() {
        let (task, ended) = lifecycle.withLock { l -> (Task<Void, Never>?, DispatchSemaphore?) in
            l.running = false
            defer { l.wakeTask = nil; l.wakeTaskEnded = nil }
            return (l.wakeTask, l.wakeTaskEnded)
        }
        task?.cancel()
        // Leave the service's event stream before returning, so closing the service right after is
        // safe. Bounded: the task may be waiting for a thread of the concurrency pool.
        _ = ended?.wait(timeout: .now() + 2)
        let all = workers.withLock { w -> [WebhookWorker] in
            defer { w.removeAll() }
            return Array(w.values)
        }
        for worker in all { worker.requestStop() }
        for worker in all { worker.waitUntilFinished() }
    }

    /// Wakes every worker (new events may be in the log).
    public func wakeAll() {
        for worker in workers.withLock({ Array($0.values) }) { worker.wake() }
    }

    func startWorker(_ webhook: StoredWebhook) {
        let worker = WebhookWorker(webhook: webhook, context: context)
        let previous = workers.withLock { w -> WebhookWorker? in
            defer { w[webhook.registration.id] = worker }
            return w[webhook.registration.id]
        }
        previous?.requestStop()
        worker.launch()
    }
}

/// The dispatcher's shared parts, held by the dispatcher and by every worker.
final class WebhookDispatchContext: Sendable {
    let service: GeofencingService
    let store: any WebhookStore
    let configuration: WebhookDispatcher.Configuration
    let transport: any WebhookTransport
    let encoder: CloudEventEncoder
    let now: @Sendable () -> Date
    let onOutcome: (@Sendable (String, WebhookDeliveryOutcome) -> Void)?
    let jitter: Mutex<JitterGenerator>

    init(service: GeofencingService, store: any WebhookStore, configuration: WebhookDispatcher.Configuration,
         transport: any WebhookTransport, encoder: CloudEventEncoder, now: @escaping @Sendable () -> Date,
         onOutcome: (@Sendable (String, WebhookDeliveryOutcome) -> Void)?, jitterSeed: UInt64) {
        self.onOutcome = onOutcome
        self.service = service
        self.store = store
        self.configuration = configuration
        self.transport = transport
        self.encoder = encoder
        self.now = now
        self.jitter = Mutex(JitterGenerator(seed: jitterSeed))
    }

    /// The next jittered retry delay.
    func nextJitter(afterFailures failures: Int) -> TimeInterval {
        jitter.withLock { generator in configuration.retryPolicy.delay(afterFailures: failures, using: &generator) }
    }
}
