import PerimeterService
import PerimeterWebhooks

/// Everything `perimeter serve` sets up.
public struct ServerConfiguration: Sendable {
    /// The SQLite database file; `nil` keeps state in memory (tests).
    public var databasePath: String?
    /// Address to bind (an IP literal).
    public var address: String
    /// Port; 0 picks a free one (read ``PerimeterServer/port``).
    public var port: UInt16
    /// HTTP event-loop threads (each serves its share of the connections and commits its rounds).
    public var threads: Int
    /// Pages the store's write-ahead log may hold before a commit checkpoints it (see
    /// `SQLiteGeofencingStore.init(path:synchronous:verifyIntegrity:lockingMode:checkpointPages:)`).
    /// The server's default, 10,000 (≈ 10 MiB of log with the 1 KiB pages of a new store), checkpoints
    /// a tenth as often as SQLite's 1,000: under a steady stream of single updates from 64
    /// connections, 1,000 pages gave ≈ 16–19 k requests/s with p99 latency ≈ 175–300 ms, 10,000 pages
    /// ≈ 22 k/s with p99 ≈ 26–33 ms; 40,000 pages were slower again (≈ 15 k/s): a long log is slow to
    /// write and to sync (docs/server.md, "Durability").
    public var checkpointPages: Int
    /// Limits, tokens, heartbeats.
    public var api: APIConfiguration
    /// The geofencing options.
    public var options: GeofencingOptions
    /// Seconds a graceful stop waits for in-flight requests.
    public var drainTimeout: Double
    /// Timed group commit, off by default (`nil`). Off, every response to a request that changed
    /// state is sent once its changes are in the store (a 200 is durable); requests that arrive at
    /// the same time share one commit, so a busy server pays for fewer transactions than requests.
    /// Set, updates are committed at least every this many seconds (and every 10,000 updates) and
    /// responses do not wait: a 200 then means "processed, events logged and published", and a crash
    /// (`kill -9`) loses at most the last interval, as a whole — never part of a request, never a
    /// committed event; `processedUpdateCount` after a restart says how many were kept. A graceful stop
    /// commits everything either way (docs/server.md, "Durability").
    public var commitInterval: Double?
    /// Whether webhooks may target loopback, private and link-local addresses (`perimeter serve
    /// --allow-private-webhooks`; tests, private deployments). Off by default: the SSRF guard
    /// (docs/webhooks.md) refuses such targets at registration and at every delivery.
    public var allowPrivateWebhookTargets: Bool
    /// Where detection is handed over when the workers of a cluster run the engine (`perimeter serve
    /// --nats`; docs/cluster.md, "The API node"), or `nil` for the embedded engine. With a relay the
    /// server keeps no file: ``databasePath`` must be `nil` (its event log is rebuilt from the cluster).
    public var relay: (any DetectionRelay)?
    /// Where the service reads live time (``GeofencingOptions/TimeModel/live``); the system clock by
    /// default. Tests inject a ``ManualClock`` (then also set `tickInterval` to `nil` and tick by hand).
    public var clock: any GeofencingClock
    /// Seconds between the service clock's ticks, or `nil` to tick by hand (``GeofencingService/tick()``).
    public var tickInterval: Double?
    /// Extra trusted CAs and the client certificate for `https` webhooks (`perimeter serve
    /// --webhook-ca`, `--webhook-client-cert`, `--webhook-client-key`; docs/webhooks.md).
    public var webhookTLS: WebhookTLS
    /// Most connections open at once, streams included (`--max-connections`, 4,096); further clients
    /// wait in the listen backlog.
    public var maximumConnections = 4096
    /// Most connections open at once from one client address (`--max-connections-per-address`, 256; 0:
    /// no limit); more are closed as soon as they are accepted, so one client cannot starve the others.
    public var maximumConnectionsPerAddress = 256
    /// Seconds a connection has to send one whole request, head and body, from its opening or its
    /// previous response (`--request-deadline`, 30; 0: none); a slow sender is cut at the deadline.
    public var requestDeadline: Double = 30
    /// Unsent bytes an event-stream client may fall behind before it is disconnected (`--stream-buffer`,
    /// 8 MiB); it resumes with `Last-Event-ID`.
    public var streamBufferLimit = 8 << 20
    /// Unsent bytes all event-stream clients together may fall behind (`--stream-buffer-total`, 256 MiB;
    /// 0: no limit): past it, a client more than 64 KiB behind is disconnected when it is next written to.
    public var maximumBufferedStreamBytes = 256 << 20

    /// Creates a configuration.
    public init(databasePath: String? = nil, address: String = "127.0.0.1", port: UInt16 = 8080, threads: Int = 2,
                checkpointPages: Int = 10_000,
                api: APIConfiguration = APIConfiguration(), options: GeofencingOptions = GeofencingOptions(),
                drainTimeout: Double = 10, commitInterval: Double? = nil, allowPrivateWebhookTargets: Bool = false,
                clock: any GeofencingClock = SystemClock(), tickInterval: Double? = 0.25,
                webhookTLS: WebhookTLS = WebhookTLS()) {
        self.databasePath = databasePath
        self.address = address
        self.port = port
        self.threads = threads
        self.checkpointPages = checkpointPages
        self.api = api
        self.options = options
        self.drainTimeout = drainTimeout
        self.commitInterval = commitInterval
        self.allowPrivateWebhookTargets = allowPrivateWebhookTargets
        self.clock = clock
        self.tickInterval = tickInterval
        self.webhookTLS = webhookTLS
    }

    /// Whether `address` is a loopback address (127.0.0.0/8 or ::1).
    public static func isLoopback(_ address: String) -> Bool {
        address.hasPrefix("127.") || address == "::1" || address == "0:0:0:0:0:0:0:1"
    }
}
