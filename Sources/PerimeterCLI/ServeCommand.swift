import Foundation
import PerimeterCluster
import PerimeterServer
import PerimeterService
import PerimeterWebhooks

/// `perimeter serve`: the REST API, event stream and metrics over HTTP (docs/server.md).
struct ServeCommand {
    static let help = """
    Usage: perimeter serve [--db FILE] [--bind ADDRESS] [--port PORT] [--token NAME:SCOPES:SECRET]...
                           [--token-file FILE] [--fences FILE] [--config FILE] [options]

    Serves the geofencing API under /v1 (fences, locations, devices, events, a Server-Sent-Events stream,
    simulations, webhooks), the live map page at /, /healthz, /readyz, /metrics and /openapi.json. State lives in the SQLite file; SIGTERM or SIGINT stops
    gracefully (stop accepting, drain, flush the store).

    Options:
      --db FILE              SQLite database (default: perimeter.sqlite; created if missing; held locked
                             while serving: read it after a stop, or through the API).
      --bind ADDRESS         IP address to listen on (default 127.0.0.1). A non-loopback address needs a token.
      --port PORT            TCP port (default 8080; 0 picks a free one and prints it).
      --token N:SCOPES:S     Accept bearer secret S as token N with SCOPES (read, write, admin; joined by ',').
                             Repeatable. Without any token, no authentication (loopback only).
      --token-file FILE      Tokens, one NAME:SCOPES:SECRET per line (# comments).
      --fences FILE          Preload a GeoJSON FeatureCollection (added or replaced by id, atomically).
      --config FILE          Engine-wide options, a JSON object: defaultDwellTime, defaultRadius (300),
                             maximumMonitoredFeatures, maximumHorizontalAccuracy, timeModel ("live" or
                             "data"), allowedLateness, maximumFutureSkew, consentByDefault, reorderWindow,
                             deduplicate, detectionOptions (fence property keys); see docs/server.md.
      --threads N            HTTP event-loop threads (default 2); each serves its share of the connections.
                             Given, it also splits the devices among N engine shards (unless --shards says).
      --shards N             Engine shards that process each batch of updates in parallel (default 1, or
                             --threads; 0: one per core). Events are the same for any count.
      --checkpoint-pages N   Let the write-ahead log grow to N pages (1 KiB; 4 KiB in older store files)
                             before a commit copies it into the database (default 10000; SQLite's own is 1000).
      --dwell SECONDS        Default dwell time for fences without one (wins over --config).
      --max-body BYTES       Largest request body (default 67108864, 64 MiB: room for a FeatureCollection
                             of 10,000 detailed fences, about 36 MB, in one POST /v1/fences).
      --max-batch N          Most updates per POST /v1/locations (default 10000).
      --rate-limit N         Requests per second per token (default: unlimited); --burst N (default 100).
      --heartbeat SECONDS    SSE heartbeat interval (default 15).
      --max-connections N    Most connections open at once, streams included (default 4096); more wait.
      --max-connections-per-address N
                             Most connections open at once from one client address (default 256; 0: no
                             limit); more are closed at once, so one client cannot starve the others.
      --request-deadline SECONDS
                             Time a connection has to send a whole request, head and body, from its opening
                             or its previous answer (default 30; 0: none); slower senders are disconnected.
      --stream-buffer BYTES  Unsent bytes an event-stream client may fall behind before it is disconnected
                             (default 8388608); it resumes with Last-Event-ID.
      --stream-buffer-total BYTES
                             Unsent bytes all event-stream clients together may fall behind (default
                             268435456; 0: no limit); past it the clients furthest behind are disconnected.
      --commit-interval MS   Group commit: commit every MS milliseconds (and every 10,000 updates) instead
                             of once per request; a crash loses at most that interval (default: off).
      --allow-private-webhooks
                             Let webhooks target loopback, private and link-local addresses (default: refused).
      --no-event-properties  Leave the fence's properties out of events (REST, stream, webhook bodies) unless
                             a request asks for them with ?properties=true; saves bytes with large properties.
      --webhook-ca FILE      Trust the CA certificates in FILE (PEM) for https webhooks, besides the system's.
      --webhook-client-cert FILE
                             Present this client certificate (PEM) to https webhook receivers (mutual TLS).
      --webhook-client-key FILE
                             Its private key (PEM, unencrypted), unless FILE of --webhook-client-cert holds it.

    Cluster (docs/cluster.md, "The API node"): with --nats the server is a stateless API node of a cluster.
    Updates go to the cluster's input stream, fences to its fences bucket, and the events the workers
    (perimeter worker --nats …) produce come back from its events stream into /v1/events, the stream and
    webhooks; device status is derived from those events. No database (--db is refused); the same
    --partitions, --replicas, --lease, --prefix and retention flags as the workers.
      --nats URL[,URL…]      NATS servers of the cluster (any one is enough to connect; all are used to reconnect).
      --partitions N         Partitions of the device space (default 64; fixed for the life of the streams).
      --replicas N           Copies of every stream and bucket (default 1; 3 on a three-server cluster).
      --lease SECONDS        Partition lease time of the workers (default 10; every process the same).
      --prefix NAME          Subject prefix and stream/bucket names of the cluster (default perimeter).
      --wait-for-cluster SECONDS
                             How long to keep trying while the cluster cannot be reached or is still electing
                             its leaders, a line on standard error per try (default 30; 0: fail at once).
    \(RetentionFlags.help)
      -h, --help             Show this help.
    """

    var configuration: ServerConfiguration
    var fences: String?
    /// With `--nats`: the cluster to relay to.
    var cluster: ClusterFlags?

    /// The cluster flags, named as `perimeter worker`'s.
    struct ClusterFlags {
        var urls: [String]
        var layout: ClusterLayout
        var replicas: Int
        var lease: Duration
        var retention: ClusterRetention
        /// How long the start tries again while the cluster's failure is temporary.
        var patience: Duration
    }

    init?(_ arguments: [String]) throws {
        var args = Arguments(arguments, command: "serve")
        if args.wantsHelp() { return nil }
        let database = try args.option("db")
        var configuration = ServerConfiguration(databasePath: database ?? "perimeter.sqlite")
        if let urls = try args.option("nats") {
            guard database == nil else {
                throw CommandLineError.usage("serve: --db and --nats exclude each other: an API node keeps no database (its events come from the cluster)")
            }
            let list = urls.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !list.isEmpty else { throw CommandLineError.usage("serve: --nats needs at least one URL, e.g. nats://127.0.0.1:4222") }
            let prefix = try args.option("prefix") ?? "perimeter"
            guard ClusterLayout.isValidPrefix(prefix) else {
                throw CommandLineError.usage("serve: --prefix '\(prefix)' must be one word of ASCII letters, digits, '-' and '_'")
            }
            let partitions = Int(try args.number("partitions", in: 1...65_536) ?? 64)
            let replicas = Int(try args.number("replicas", in: 1...5) ?? 1)
            let lease = try args.number("lease", in: 1...3600) ?? 10
            let retention = try RetentionFlags.parse(&args, command: "serve")
            let patience = try args.number("wait-for-cluster", in: 0...86_400) ?? 30
            cluster = ClusterFlags(urls: list, layout: ClusterLayout(prefix: prefix, partitioning: DevicePartitioning(count: partitions)!),
                                   replicas: replicas, lease: .milliseconds(Int64(lease * 1000)), retention: retention,
                                   patience: .milliseconds(Int64(patience * 1000)))
            configuration.databasePath = nil
        }
        configuration.address = try args.option("bind") ?? "127.0.0.1"
        configuration.port = UInt16(try args.number("port", in: 0...65_535) ?? 8080)
        let threads = try args.number("threads", in: 1...256).map(Int.init)
        configuration.threads = threads ?? 2
        var shards = try args.number("shards", in: 0...1024).map(Int.init) ?? threads
        if shards == 0 { shards = ProcessInfo.processInfo.activeProcessorCount }
        if let pages = try args.number("checkpoint-pages", in: 1...10_000_000) { configuration.checkpointPages = Int(pages) }
        var tokens: [AccessToken] = []
        do {
            for text in try args.options("token") { tokens.append(try AccessToken(parsing: text)) }
            if let file = try args.option("token-file") {
                let bytes = try InputFiles.bytes(file, what: "token file")
                tokens += try AccessToken.parseFile(String(decoding: bytes, as: UTF8.self))
            }
        } catch let error as TokenError {
            throw CommandLineError.usage("serve: \(error.message)")
        }
        configuration.api.tokens = tokens
        if let path = try args.option("config") {
            let bytes = try InputFiles.bytes(path, what: "options file")
            do throws(OptionsFile.Problem) {
                configuration.options = try OptionsFile.options(from: bytes, base: configuration.options)
            } catch {
                throw CommandLineError.data("serve: \(path): \(error)")
            }
        }
        if let dwell = try args.number("dwell", in: 0...1e9) { configuration.options.defaultDwellTime = dwell }
        if let shards { configuration.options.shards = shards }
        if let body = try args.number("max-body", in: 1...1e10) { configuration.api.maximumBodySize = Int(body) }
        if let batch = try args.number("max-batch", in: 1...1e8) { configuration.api.maximumBatchSize = Int(batch) }
        configuration.api.rateLimit = try args.number("rate-limit", in: 0.001...1e9)
        if let burst = try args.number("burst", in: 1...1e9) { configuration.api.rateBurst = burst }
        if let beat = try args.number("heartbeat", in: 0.1...3600) { configuration.api.heartbeatInterval = beat }
        if let count = try args.number("max-connections", in: 1...1_000_000) { configuration.maximumConnections = Int(count) }
        if let count = try args.number("max-connections-per-address", in: 0...1_000_000) {
            configuration.maximumConnectionsPerAddress = Int(count)
        }
        if let seconds = try args.number("request-deadline", in: 0...86_400) { configuration.requestDeadline = seconds }
        if let bytes = try args.number("stream-buffer", in: 1024...1e10) { configuration.streamBufferLimit = Int(bytes) }
        if let bytes = try args.number("stream-buffer-total", in: 0...1e12) { configuration.maximumBufferedStreamBytes = Int(bytes) }
        if let milliseconds = try args.number("commit-interval", in: 1...60_000) {
            configuration.commitInterval = milliseconds / 1000
        }
        configuration.allowPrivateWebhookTargets = args.flag("allow-private-webhooks")
        configuration.api.eventProperties = !args.flag("no-event-properties")
        configuration.webhookTLS = WebhookTLS(trustedCAFile: try args.option("webhook-ca"),
                                              clientCertificateFile: try args.option("webhook-client-cert"),
                                              clientKeyFile: try args.option("webhook-client-key"))
        fences = try args.option("fences")
        try args.finish()
        self.configuration = configuration
    }

    static func run(_ arguments: [String], console: Console) throws -> Int32 {
        guard let command = try ServeCommand(arguments) else {
            console.print(help)
            return 0
        }
        let preload = try command.fences.map { try InputFiles.bytes($0, what: "fence file") }
        var configuration = command.configuration
        var relay: ClusterRelay?
        if let cluster = command.cluster {
            let resources: ClusterResources
            do {
                resources = try ClusterResources.connect(urls: cluster.urls, name: "perimeter serve", layout: cluster.layout,
                                                         replicas: cluster.replicas, leaseDuration: cluster.lease,
                                                         retention: cluster.retention, patience: cluster.patience) { error in
                    console.complain("serve: the cluster is not ready, trying again: \(error)")
                }
            } catch {
                throw CommandLineError.usage("serve: cannot open the cluster at \(cluster.urls.joined(separator: ",")): \(error)")
            }
            relay = ClusterRelay(resources: resources)
            configuration.relay = relay
        }
        let server: PerimeterServer
        switch Result(catching: { () throws(ServerError) -> PerimeterServer in
            try PerimeterServer(configuration: configuration)
        }) {
        case .success(let started): server = started
        case .failure(let error): throw CommandLineError.usage("serve: \(error.message)")
        }
        if let relay, let cluster = command.cluster {
            do {
                try relay.start(service: server.service)
            } catch {
                server.stop()
                relay.stop()
                throw CommandLineError.usage("serve: cannot read the cluster's fences and events: \(error)")
            }
            console.print("perimeter: API node of cluster '\(cluster.layout.prefix)' at \(cluster.urls.joined(separator: ",")) (\(cluster.layout.partitioning.count) partitions, \(cluster.replicas) replica\(cluster.replicas == 1 ? "" : "s")); \(relay.eventSequence) events read")
        }
        if let preload, let path = command.fences {
            switch Result(catching: { () throws(Problem) -> Int in try server.api.importFeatures(preload) }) {
            case .success(let count):
                console.print("perimeter: loaded \(count) fences from \(path)")
            case .failure(let problem):
                server.stop()
                throw CommandLineError.data("serve: \(path): \(problem.detail)")
            }
        }
        let host = configuration.address.contains(":") ? "[\(configuration.address)]" : configuration.address
        // Caught before the line that invites Ctrl-C is printed, so no signal falls between the two.
        let signals = StopSignals()
        defer { signals.restore() }
        console.print("perimeter: serving http://\(host):\(server.port)/ (database \(configuration.databasePath ?? "in memory"), \(configuration.api.tokens.count) token\(configuration.api.tokens.count == 1 ? "" : "s")); SIGTERM or Ctrl-C stops")
        signals.wait()
        server.stop()
        relay?.stop()
        console.print(relay == nil ? "perimeter: stopped; store flushed" : "perimeter: stopped")
        return 0
    }
}
