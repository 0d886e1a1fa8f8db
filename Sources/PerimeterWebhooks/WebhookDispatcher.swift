import Foundation
import PerimeterEngine
import PerimeterService
import Synchronization

/// Delivers the service's durable event log to registered webhooks: one worker thread per webhook reads
/// the log after the webhook's persisted cursor, in sequence order, and POSTs each matching event as a
/// signed CloudEvent, retrying with exponential backoff and full jitter for the retry window, then
/// dead-lettering it. Workers wake when the service logs events (an observer) and poll the log as a safety net.
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
        /// Registered with the service while running.
        var wakeObserver: WakeObserver?
    }

    /// Wakes the workers when the service logs events. An observer, called on the thread that
    /// processed the update once the service's lock is released: no task and no thread hop per event
    /// (a stream subscription cost each logged event a task resume on Swift's pool, even with no
    /// webhook registered).
    /// Errors and consent changes log no event, so they wake nobody.
    final class WakeObserver: ExtendedGeofencingObserver {
        weak let dispatcher: WebhookDispatcher?
        init(_ dispatcher: WebhookDispatcher) { self.dispatcher = dispatcher }
        func onEntry(event: GeofencingEvent) { dispatcher?.wakeAll() }
        func onDwell(event: GeofencingEvent) { dispatcher?.wakeAll() }
        func onExit(event: GeofencingEvent) { dispatcher?.wakeAll() }
        func onCross(event: GeofencingEvent) { dispatcher?.wakeAll() }
        func onInside(event: GeofencingEvent) { dispatcher?.wakeAll() }
        func onError(error: GeofencingError) {}
        func onUserConsentChanged(isConsentGiven: Bool) {}
        func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool) {}
    }

    /// Creates a dispatcher (not started).
    ///
    /// - Parameters:
    ///   - transport: how requests are sent; default ``WebhookHTTPClient`` with the configuration's
    ///     timeouts, TLS files and SSRF policy.
    ///   - now: the clock (injectable for tests). Waits between attempts are real time.
    ///   - onOutcome: called on a worker thread after each attempt's outcome is saved, with the
    ///     webhook id (for example to feed server-wide metrics); keep it fast.
    /// - Throws: ``WebhookError/Code/invalidArgument`` for a bad configuration (a TLS file missing or
    ///   not PEM included).
    public init(service: GeofencingService, store: any WebhookStore, configuration: Configuration = Configuration(),
                transport: (any WebhookTransport)? = nil,
                now: @escaping @Sendable () -> Date = { Date() },
                onOutcome: (@Sendable (_ webhookID: String, _ outcome: WebhookDeliveryOutcome) -> Void)? = nil) throws(WebhookError) {
        if let problem = configuration.validate() { throw problem }
        var system = SystemRandomNumberGenerator()
        let client: any WebhookTransport
        if let transport {
            client = transport
        } else {
            client = try WebhookHTTPClient(
                policy: TargetAddressPolicy(allowPrivateTargets: configuration.allowPrivateTargets),
                connectTimeout: configuration.connectTimeout, responseTimeout: configuration.responseTimeout,
                tls: configuration.tls)
        }
        context = WebhookDispatchContext(
            service: service, store: store, configuration: configuration,
            transport: client,
            encoder: CloudEventEncoder(source: configuration.source, properties: configuration.eventProperties), now: now,
            onOutcome: onOutcome,
            jitterSeed: configuration.jitterSeed ?? system.next())
    }

    deinit { stop() }

    /// Whether ``start()`` was called and ``stop()`` was not.
    public var isRunning: Bool { lifecycle.withLock { $0.running } }

    /// Starts one worker per stored webhook and registers with the service as an observer, to wake them when events are logged (idempotent).
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
        let observer = WakeObserver(self)
        lifecycle.withLock { $0.wakeObserver = observer }
        service.addObserver(observer)
    }

    /// Stops every worker and waits for them: an attempt in flight finishes first (bounded by the
    /// timeouts) and its outcome is saved; the dispatcher stops observing the service before returning.
    /// Delivery resumes from the store on the next ``start()``.
    public func stop() {
        let observer = lifecycle.withLock { l -> WakeObserver? in
            l.running = false
            defer { l.wakeObserver = nil }
            return l.wakeObserver
        }
        if let observer { service.removeObserver(observer) }
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
