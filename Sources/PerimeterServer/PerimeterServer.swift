import Foundation
import PerimeterHTTP
import PerimeterService
import PerimeterSQLite
import PerimeterWebhooks
import Synchronization

/// The whole server: a ``GeofencingService`` on an SQLite store (or in memory), the REST API, the SSE
/// hub fed by the service's event sink (``EventFeeder``), heartbeats, the webhook dispatcher (its own SQLite file
/// `<db>.webhooks`, or in memory), simulated drives, the map page, and the HTTP transport.
///
/// ```swift
/// let server = try PerimeterServer(configuration: ServerConfiguration(databasePath: "perimeter.sqlite", port: 0))
/// print(server.port)
/// server.stop()      // graceful: stop accepting, end streams, drain, flush the store
/// ```
public final class PerimeterServer: Sendable {
    /// The geofencing service.
    public let service: GeofencingService
    /// The API (also callable in-process).
    public let api: PerimeterAPI
    /// The configuration it started with.
    public let configuration: ServerConfiguration
    /// Delivers the event log to registered webhooks (started with the server, stopped before the store closes).
    public let webhooks: WebhookDispatcher
    let http: HTTPServer
    /// The SQLite store, closed after the service so that its file is free once the server stopped.
    let sqliteStore: SQLiteGeofencingStore?
    /// Publishes the logged events to the stream clients and the metrics, from its own thread.
    let feeder: EventFeeder
    let heartbeat: Mutex<Task<Void, Never>?>
    let stopped = Atomic<Bool>(false)
    /// The thread the heartbeat runs on (never the shared pool: see ``ThreadExecutor``).
    let background = ThreadExecutor(name: "perimeter-server-background")

    /// Opens the store, configures the service and starts listening.
    /// - Throws: ``ServerError`` for a non-loopback address without tokens, a store that cannot be opened,
    ///   or an address/port that cannot be bound.
    public init(configuration: ServerConfiguration) throws(ServerError) {
        guard ServerConfiguration.isLoopback(configuration.address) || !configuration.api.tokens.isEmpty else {
            throw ServerError(
                "refusing to listen on \(configuration.address) without any token: anyone could read and change the fences. Add --token NAME:SCOPES:SECRET (or --token-file), or bind 127.0.0.1")
        }
        guard configuration.relay == nil || configuration.databasePath == nil else {
            throw ServerError("an API node of a cluster keeps no database: its event log is read from the cluster's events stream; leave out the database")
        }
        self.configuration = configuration
        let service: GeofencingService
        var storeSize: @Sendable () -> Int64? = { nil }
        var sqliteStore: SQLiteGeofencingStore?
        do throws(GeofencingError) {
            if let path = configuration.databasePath {
                // Exclusive: the server is the file's only user while it runs (no lock calls per commit).
                let store = try SQLiteGeofencingStore(path: path, lockingMode: .exclusive,
                                                      checkpointPages: configuration.checkpointPages)
                sqliteStore = store
                service = GeofencingService(store: store, clock: configuration.clock, tickInterval: configuration.tickInterval)
                storeSize = {
                    let manager = FileManager.default
                    var total: Int64 = 0
                    for file in [path, path + "-wal"] {
                        if let size = (try? manager.attributesOfItem(atPath: file))?[.size] as? NSNumber {
                            total += size.int64Value
                        }
                    }
                    return total
                }
            } else {
                service = GeofencingService(clock: configuration.clock, tickInterval: configuration.tickInterval,
                                            relay: configuration.relay)
            }
            var options = configuration.options
            if configuration.commitInterval != nil { options.durability = .everyUpdates(10_000) }
            try service.configure(options)
        } catch {
            sqliteStore?.close()
            throw ServerError("cannot open the store: \(error)")
        }
        self.service = service
        self.sqliteStore = sqliteStore
        let metrics = Metrics()
        do throws(WebhookError) {
            let store: any WebhookStore
            if let path = configuration.databasePath {
                do throws(GeofencingError) {
                    store = try SQLiteWebhookStore(path: path + ".webhooks")
                } catch {
                    throw WebhookError(.storageFailure, "cannot open the webhook store \(path).webhooks: \(error)")
                }
            } else {
                store = InMemoryWebhookStore()
            }
            webhooks = try WebhookDispatcher(
                service: service, store: store,
                configuration: WebhookDispatcher.Configuration(allowPrivateTargets: configuration.allowPrivateWebhookTargets,
                                                               eventProperties: configuration.api.eventProperties,
                                                               tls: configuration.webhookTLS),
                onOutcome: { _, outcome in metrics.recordWebhookDelivery(outcome: outcome.rawValue) })
        } catch {
            try? service.close()
            sqliteStore?.close()
            throw ServerError("cannot set up webhooks: \(error.message)")
        }
        // Weak: the dispatcher's `onOutcome` holds the metrics, so a strong reference here would be a
        // cycle that keeps the dispatcher, its service and store alive after the server is gone.
        let dispatcher = webhooks
        metrics.readWebhookDeliveries { [weak dispatcher] in try? dispatcher?.deliveryTotals() }
        var apiConfiguration = configuration.api
        apiConfiguration.maximumBodySize = max(1, apiConfiguration.maximumBodySize)
        let api = PerimeterAPI(service: service, configuration: apiConfiguration, metrics: metrics, storeSize: storeSize,
                               webhooks: webhooks)
        self.api = api
        let hub = api.hub
        let background = self.background
        let feeder = EventFeeder { events in
            for logged in events {
                metrics.recordEvent(type: logged.event.kind.rawValue)
                hub.publish(logged)
            }
        }
        self.feeder = feeder
        // Streams show committed events only: with a timed group commit an event logged but not yet
        // stored could be undone by a crash, and a client must never have seen it.
        service.setEventSink(whenStored: true) { feeder.append($0) }
        let interval = max(0.05, configuration.api.heartbeatInterval)
        let commitInterval = configuration.commitInterval.map { max(0.001, $0) }
        heartbeat = Mutex(Task.detached(executorPreference: background) {
            var sinceBeat = 0.0
            while !Task.isCancelled {
                let step = min(interval - sinceBeat, commitInterval ?? interval)
                try? await Task.sleep(nanoseconds: UInt64(max(step, 0.001) * 1e9))
                if commitInterval != nil { try? service.flush() }
                sinceBeat += step
                if sinceBeat >= interval - 1e-9 {
                    sinceBeat = 0
                    hub.heartbeat()
                }
            }
        })
        do throws(HTTPServerError) {
            http = try HTTPServer(
                configuration: HTTPServer.Configuration(
                    address: configuration.address, port: configuration.port, threads: configuration.threads,
                    maximumBodySize: apiConfiguration.maximumBodySize,
                    maximumConnections: configuration.maximumConnections,
                    maximumConnectionsPerAddress: configuration.maximumConnectionsPerAddress,
                    requestDeadline: configuration.requestDeadline,
                    maximumBufferedStreamBytes: configuration.maximumBufferedStreamBytes,
                    transportError: Self.transportProblem),
                responder: { request, responder in api.handle(request, responder: responder, committer: .caller) },
                // One commit per round of each event loop answers every location post of the round.
                afterEachRound: { service.commitWaiting() > 0 })
        } catch {
            heartbeat.withLock { $0?.cancel() }
            service.setEventSink(nil)
            feeder.stop()
            try? service.close()
            sqliteStore?.close()
            background.shutdown()
            throw ServerError(error.message)
        }
        hub.setStreamLimits(perClient: configuration.streamBufferLimit, shared: http.streamBudget)
        api.metrics.readConnectionRefusals { [weak http] in
            let refusals = http?.refusals ?? (perAddress: 0, pastDeadline: 0)
            return ["per_address": Int(refusals.perAddress), "deadline": Int(refusals.pastDeadline)]
        }
        // A commit that ends while other loops' answers wait (registered during it) wakes the loops.
        service.onCompletionsWaiting { [weak http] in http?.wakeLoops() }
        do throws(WebhookError) {
            try webhooks.start()
        } catch {
            http.stop(drainTimeout: 0)
            shutDown()
            throw ServerError("cannot start webhook delivery: \(error)")
        }
    }

    /// The transport's own refusals (bad framing, server stopping) as problem documents.
    static let transportProblem: @Sendable (Int, String, String) -> HTTPResponse = { status, detail, path in
        let problem = switch status {
        case 400: Problem(400, "bad-framing", title: "Malformed request", detail: detail)
        // The transport refuses a declared length over the limit before the body is sent; its detail
        // names both sizes, to which this adds the flag that raises the limit.
        case 413: Problem(413, "body-too-large", title: "Request body too large",
                          detail: detail + ", or start perimeter serve with a --max-body (bytes) of at least the body's size")
        case 503: Problem(503, "stopping", title: "Service stopping", detail: detail)
        default: Problem(status, "transport", title: "Request refused", detail: detail)
        }
        return problem.response(instance: path.isEmpty ? nil : path)
    }

    /// Ends the background work and closes the store (after the transport has stopped).
    func shutDown() {
        api.simulations.stopAll()
        heartbeat.withLock { $0?.cancel() }
        webhooks.stop()
        // Close the service first: its last commit may log events (reorder windows released), which
        // the feeder still publishes; then the feeder ends.
        try? service.close()
        service.setEventSink(nil)
        feeder.stop()
        sqliteStore?.close()
        background.shutdown()
    }

    /// The port listened on.
    public var port: UInt16 { http.port }

    /// Stops gracefully: `/readyz` turns 503, simulations end, no new connections, event streams end,
    /// in-flight requests finish (up to the drain timeout), webhook workers finish their attempt in
    /// flight and record it, then the store is flushed and closed. Safe to call twice.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        api.beginStopping()
        api.simulations.stopAll()
        api.hub.finishAll()
        http.stop(drainTimeout: configuration.drainTimeout)
        shutDown()
    }
}
