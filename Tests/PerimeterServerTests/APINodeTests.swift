import Foundation
import PerimeterCluster
import PerimeterGeoJSON
import PerimeterNATS
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

/// `perimeter serve --nats`: a server whose service relays to a cluster (``ClusterRelay``), with an
/// in-process ``ClusterWorker`` as the cluster's worker, against a real `nats-server` on loopback, and
/// driven over real HTTP. Compared with a single-process server given the same requests.
@Suite("API node of a cluster (NATS and HTTP on loopback)", .serialized,
       .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct APINodeTests {
    static let nats: Result<NATSServer, any Error> = Result { try NATSServer.start(name: "api-node-tests") }

    /// One API node of a cluster: a server whose service relays to `resources`' cluster, started.
    final class APINode {
        let relay: ClusterRelay
        let server: PerimeterServer

        init(resources: ClusterResources, threads: Int = 1) throws {
            relay = ClusterRelay(resources: resources)
            var configuration = ServerConfiguration(databasePath: nil, address: "127.0.0.1", port: 0, threads: threads,
                                                    api: APIConfiguration(heartbeatInterval: 60), drainTimeout: 5)
            configuration.relay = relay
            server = try PerimeterServer(configuration: configuration)
            try relay.start(service: server.service)
        }

        func stop() {
            server.stop()
            relay.stop()
        }
    }

    /// A running cluster of one NATS server, one worker and one API node.
    final class Node {
        let resources: ClusterResources
        let worker: ClusterWorker
        let api: APINode
        var relay: ClusterRelay { api.relay }
        var server: PerimeterServer { api.server }

        init(partitions: Int = 4) throws {
            let connection = try NATSConnection(urls: [try APINodeTests.nats.get().url], name: "api-node-test")
            let js = try JetStream(connection)
            let layout = ClusterLayout(prefix: "n\(UUID().uuidString.prefix(8).lowercased())",
                                       partitioning: DevicePartitioning(count: partitions)!)
            resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10))
            worker = ClusterWorker(jetStream: js, layout: layout, leases: resources.leases, snapshots: resources.snapshots,
                                   fenceBucket: resources.fences,
                                   configuration: ClusterWorker.Configuration(id: "worker-1", leaseDuration: .seconds(10),
                                                                              tickInterval: .milliseconds(100)))
            worker.start()
            api = try APINode(resources: resources, threads: 2)
        }

        func stop() {
            api.stop()
            worker.stop(releasing: true)
        }
    }

    static let devices = ["van", "bus", "a b", "ünï", "x.y", "car*"]

    /// Devices driving in and out of two fences, in time order.
    static func batch() -> JSONValue {
        var items: [JSONValue] = []
        for step in 0..<8 {
            for (d, device) in devices.enumerated() {
                items.append(T.update(device, 10 * step + d, inside: (step + d) % 3 != 0, offset: Double((step / 4) % 2)))
            }
        }
        return .array(items)
    }

    /// Every event of `port`'s log once there are `count` (or after `timeout`).
    static func events(port: UInt16, count: Int, timeout: Duration = .seconds(30)) async throws -> [JSONValue] {
        let client = try TestClient(port: port)
        var events: [JSONValue] = []
        try await poll(timeout: timeout) {
            events = T.parse(try client.request("GET", "/v1/events?limit=1000").body)["events"]?.arrayValue ?? []
            return events.count >= count
        }
        return events
    }

    static func poll(timeout: Duration, _ condition: () throws -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
    }

    static func perDevice(_ events: [JSONValue]) -> [String: [String]] {
        Dictionary(grouping: events, by: { $0["deviceId"]?.stringValue ?? "" }).mapValues { $0.compactMap { $0["id"]?.stringValue } }
    }

    /// The service holds its relay; were the relay to hold the service too, a stopped node (and the
    /// process of `perimeter serve --nats` at exit, which LeakSanitizer checks) would keep both.
    @Test func aStoppedNodeLetsGoOfItsServerServiceAndRelay() throws {
        weak var server: PerimeterServer?
        weak var service: GeofencingService?
        weak var relay: ClusterRelay?
        do {
            let node = try Node()
            (server, service, relay) = (node.server, node.server.service, node.relay)
            let client = try TestClient(port: node.server.port)
            #expect(try client.request("POST", "/v1/locations", body: Array(T.json(Self.batch()).utf8)).status == 200)
            node.stop()
        }
        let alive = ServerReleaseTests.released {
            [("server", server as AnyObject?), ("service", service), ("relay", relay)].compactMap { $0.1 == nil ? nil : $0.0 }
        }
        #expect(alive.isEmpty, "still alive after stop: \(alive)")
    }

    @Test func eventsReachRESTAndTheStreamWithTheSingleProcessIdsAndARetryDoublesNothing() async throws {
        let node = try Node()
        defer { node.stop() }
        let reference = try FanoutTests.start()
        defer { reference.stop() }
        try await Self.poll(timeout: .seconds(20)) { node.worker.ownedPartitions.count == 4 }
        #expect(node.worker.ownedPartitions.count == 4)

        let client = try TestClient(port: node.server.port)
        let local = try TestClient(port: reference.port)
        for (port, http) in [(node.server.port, client), (reference.port, local)] {
            _ = port
            #expect(try http.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)
            #expect(try http.request("PUT", "/v1/fences/lake", body: Array(T.square(name: "Lake", offset: 1).utf8)).status == 201)
        }
        // The fences are in the bucket, and on the API node.
        #expect(try node.resources.fences.get(FenceFeed.key(of: "park")) != nil)
        #expect(T.parse(try client.request("GET", "/v1/fences/lake").body)["properties"]?["name"] == "Lake")
        // The worker applies them at its partitions' next ticks.
        try await Task.sleep(for: .milliseconds(800))

        let stream = try TestClient(port: node.server.port, timeout: 30)
        try stream.send("GET", "/v1/events/stream")
        #expect(try stream.readHead().0 == 200)

        let body = Array(T.json(Self.batch()).utf8)
        let answer = T.parse(try client.request("POST", "/v1/locations", body: body).body)
        #expect(answer["accepted"] == 48)
        #expect(answer["events"]?.arrayValue?.isEmpty == true, "an API node answers before the workers detect")
        #expect(T.parse(try local.request("POST", "/v1/locations", body: body).body)["accepted"] == 48)
        let expected = try await Self.events(port: reference.port, count: 1, timeout: .seconds(5))
        #expect(expected.count > 10, "the drive makes entries and exits")

        // A client's retry of the same batch: stored once, so no event twice.
        #expect(T.parse(try client.request("POST", "/v1/locations", body: body).body)["accepted"] == 48)
        let events = try await Self.events(port: node.server.port, count: expected.count)
        try await Task.sleep(for: .milliseconds(500))
        let settled = try await Self.events(port: node.server.port, count: expected.count)
        #expect(settled.count == expected.count, "no event doubled by the retry")
        #expect(Set(events.compactMap { $0["id"]?.stringValue }) == Set(expected.compactMap { $0["id"]?.stringValue }))
        #expect(Self.perDevice(events) == Self.perDevice(expected), "per device, the same events in the same order")
        #expect(events.map { $0["sequence"] } == (1...events.count).map { .integer(Int64($0)) })
        #expect(events.first { $0["fenceId"] == "park" }?["fenceName"] == "Park", "events carry the fence as the node knows it")

        // The stream gets them too, with the log's sequence numbers as SSE ids.
        let text = try stream.readStream { FanoutTests.ids($0).count >= expected.count }
        #expect(FanoutTests.ids(text) == (1...Int64(expected.count)).map { $0 })
        let streamed = FanoutTests.messages(text, type: "entry") + FanoutTests.messages(text, type: "exit")
        #expect(streamed.count == expected.count)

        // Device status, derived from the events.
        for device in Self.devices {
            let path = "/v1/devices/" + (device.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? device)
            let mine = T.parse(try client.request("GET", path).body)
            let theirs = T.parse(try local.request("GET", path).body)
            #expect(mine["derivedFrom"] == "events")
            #expect(mine["inside"]?.arrayValue?.map { $0["fenceId"] } == theirs["inside"]?.arrayValue?.map { $0["fenceId"] },
                    "\(device) is inside the same fences")
            #expect(mine["inside"]?.arrayValue?.map { $0["visitId"] } == theirs["inside"]?.arrayValue?.map { $0["visitId"] })
            #expect(mine["lastUpdateTime"] == theirs["lastUpdateTime"])
        }
        #expect(try client.request("GET", "/v1/devices/never").status == 404)

        // /metrics: what the node published (the retry too: the stream drops it) and how far it read.
        let metrics = String(decoding: try client.request("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("\nperimeter_cluster_updates_relayed 96\n"), "\(metrics)")
        #expect(metrics.contains("\nperimeter_cluster_events_read \(node.relay.eventSequence)\n"))
        #expect(node.relay.eventSequence >= UInt64(expected.count))
        #expect(metrics.contains("\nperimeter_cluster_events_lag 0\n"))
        #expect(metrics.contains("\nperimeter_cluster_events_undecodable 0\n"))
    }

    /// A second API node started later reads the fences and the whole event log from the cluster, and
    /// numbers the events as the first did; a fence removed through it is gone from the first.
    @Test func aSecondNodeReadsTheSameFencesAndEventLog() async throws {
        let node = try Node()
        defer { node.stop() }
        try await Self.poll(timeout: .seconds(20)) { node.worker.ownedPartitions.count == 4 }
        let client = try TestClient(port: node.server.port)
        #expect(try client.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)
        #expect(try client.request("PUT", "/v1/fences/lake", body: Array(T.square(name: "Lake", offset: 1).utf8)).status == 201)
        try await Task.sleep(for: .milliseconds(800))
        _ = try client.request("POST", "/v1/locations", body: Array(T.json(Self.batch()).utf8))
        let first = try await Self.events(port: node.server.port, count: 20)
        try await Task.sleep(for: .milliseconds(500))
        let all = try await Self.events(port: node.server.port, count: first.count)

        let relay = ClusterRelay(resources: node.resources)
        var configuration = ServerConfiguration(databasePath: nil, address: "127.0.0.1", port: 0, threads: 1,
                                                api: APIConfiguration(heartbeatInterval: 60), drainTimeout: 5)
        configuration.relay = relay
        let second = try PerimeterServer(configuration: configuration)
        defer {
            second.stop()
            relay.stop()
        }
        try relay.start(service: second.service)
        let theirs = try await Self.events(port: second.port, count: all.count)
        #expect(theirs == all, "the same events, numbered alike")
        let other = try TestClient(port: second.port)
        let deleted = try other.request("DELETE", "/v1/fences/lake")
        #expect(deleted.status == 204, "\(deleted.text)")
        try await Self.poll(timeout: .seconds(10)) { try client.request("GET", "/v1/fences/lake").status == 404 }
        #expect(try client.request("GET", "/v1/fences/lake").status == 404)
        #expect(try client.request("GET", "/v1/fences/park").status == 200)
    }

    /// A simulated drive started on the API node goes through the relay too (its synchronous path):
    /// the worker's entry comes back into the node's log.
    @Test func aSimulatedDriveOnTheNodeReachesTheWorker() async throws {
        let node = try Node()
        defer { node.stop() }
        try await Self.poll(timeout: .seconds(20)) { node.worker.ownedPartitions.count == 4 }
        let client = try TestClient(port: node.server.port)
        #expect(try client.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)
        try await Task.sleep(for: .milliseconds(800))
        let drive: JSONValue = ["deviceId": "sim", "speed": 1000, "interval": 10, "timeScale": 10_000,
                                "path": ["type": "LineString", "coordinates": [[-110.5, 45.2], [-110.5, 44.6]]]]
        #expect(try client.request("POST", "/v1/simulations", body: Array(T.json(drive).utf8)).status == 201)
        let events = try await Self.events(port: node.server.port, count: 1, timeout: .seconds(20))
        #expect(events.map { $0["type"] } == ["entry"])
        #expect(events.first?["deviceId"] == "sim")
        let status = T.parse(try client.request("GET", "/v1/devices/sim").body)
        #expect(status["inside"]?.arrayValue?.map { $0["fenceId"] } == ["park"])
    }
}
