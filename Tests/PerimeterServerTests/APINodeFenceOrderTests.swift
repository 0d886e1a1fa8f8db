import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterNATS
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Synchronization
import Testing

/// Two API nodes changing the same fences at the same time end with what the fences bucket holds: each
/// node's copy follows the bucket in revision order (its own changes too), so no node keeps a version
/// that another node's later change replaced. A real `nats-server`, an in-process worker, loopback HTTP.
@Suite("API nodes apply fence changes in the bucket's order (NATS and HTTP on loopback)", .serialized,
       .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct APINodeFenceOrderTests {
    /// The `name` property of fence `id` as `port` serves it (`nil`: not found).
    static func name(of id: String, port: UInt16) throws -> String? {
        let answer = try TestClient(port: port).request("GET", "/v1/fences/\(id)")
        guard answer.status == 200 else { return nil }
        return T.parse(answer.body)["properties"]?["name"]?.stringValue
    }

    /// The `name` property of fence `id` as the bucket holds it (`nil`: deleted or never written).
    static func bucketName(of id: String, _ resources: ClusterResources) throws -> String? {
        guard let entry = try resources.fences.get(FenceFeed.key(of: FenceID(id))),
              case .feature(let feature)? = GeoJSONReader().read(entry.value).object else { return nil }
        return feature.properties["name"]?.stringValue
    }

    @Test func concurrentChangesOfOneFenceEndAsTheBucketOnEveryNode() async throws {
        let node = try APINodeTests.Node()
        defer { node.stop() }
        let second = try APINodeTests.APINode(resources: node.resources)
        defer { second.stop() }
        let ports = [node.server.port, second.server.port]
        let rounds = 25
        // Each node writes its own versions of the same two fences as fast as it can; one of the fences
        // is also deleted by the other node every few rounds, so deletes race puts as well.
        let problems = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { writer in
            guard let client = try? TestClient(port: ports[writer]) else { return }
            for round in 0..<rounds {
                for id in ["park", "lake"] {
                    let body = Array(T.square(name: "\(id)-\(writer)-\(round)").utf8)
                    if let answer = try? client.request("PUT", "/v1/fences/\(id)", body: body), answer.status != 201, answer.status != 200 {
                        problems.withLock { $0.append("PUT \(id) on node \(writer + 1): \(answer.status) \(answer.text)") }
                    }
                    // Read your writes: the node answers with this version or a later one, never nothing
                    // (park is never deleted).
                    if id == "park", (try? Self.name(of: id, port: ports[writer])) == nil {
                        problems.withLock { $0.append("node \(writer + 1) lost \(id) right after writing it") }
                    }
                }
                if writer == 1, round % 5 == 4 {
                    if let answer = try? client.request("DELETE", "/v1/fences/lake"), answer.status != 204, answer.status != 404 {
                        problems.withLock { $0.append("DELETE lake on node 2: \(answer.status)") }
                    }
                }
            }
        }
        let problemsSeen = problems.withLock { $0 }
        #expect(problemsSeen.isEmpty, "\(problemsSeen)")
        for id in ["park", "lake"] {
            let expected = try Self.bucketName(of: id, node.resources)
            if id == "park" { #expect(expected != nil) }
            // The watchers deliver the last revisions within milliseconds; a stale copy would stay forever.
            try await APINodeTests.poll(timeout: .seconds(10)) {
                try ports.allSatisfy { try Self.name(of: id, port: $0) == expected }
            }
            for port in ports {
                #expect(try Self.name(of: id, port: port) == expected, "\(id) on port \(port) follows the bucket")
            }
        }
    }

    /// A relay standing for a cluster where another node's change to the same fence lands right after
    /// this node's: it applies both to the service, in the store's order, before it answers.
    final class OvertakingRelay: DetectionRelay, @unchecked Sendable {
        weak var service: GeofencingService?
        /// What the other node stores right after each change relayed here.
        var later: (upserted: [GeoJSON.Feature], removed: [FenceID]) = ([], [])
        func relay(_ updates: [LocationUpdate], completion: @escaping @Sendable (GeofencingError?) -> Void) { completion(nil) }
        func relayFences(upserted: [GeoJSON.Feature], removed: [FenceID]) throws(GeofencingError) -> Bool {
            guard let service else { return false }
            try service.applyRelayedFences(upserted: upserted, removed: removed)
            try service.applyRelayedFences(upserted: later.upserted, removed: later.removed)
            return true
        }
    }

    static func feature(_ id: String, name: String) throws -> GeoJSON.Feature {
        guard case .feature(let feature)? = GeoJSONReader().read(Array(T.square(id: id, name: name).utf8)).object else {
            throw GeofencingError(.invalidFeature, "not a feature")
        }
        return feature
    }

    /// The service's part, deterministically: a relay that applied the store's changes (its own and a
    /// later one of another node) is not overridden by the service applying its own change afterwards —
    /// for an upsert, a removal, and clearing every fence.
    @Test func aRelayedChangeIsNotAppliedAgainAfterALaterOne() throws {
        let relay = OvertakingRelay()
        let service = GeofencingService(clock: ManualClock(Date(timeIntervalSince1970: 1_750_000_000)), tickInterval: nil, relay: relay)
        relay.service = service
        try service.configure(GeofencingOptions())

        relay.later = ([try Self.feature("park", name: "theirs")], [])
        try service.addFeature(try Self.feature("park", name: "mine"))
        #expect(try service.features().map { $0.properties["name"]?.stringValue } == ["theirs"])

        relay.later = ([try Self.feature("park", name: "again")], [])
        try service.removeFeature(id: "park")
        #expect(try service.features().map { $0.properties["name"]?.stringValue } == ["again"])

        relay.later = ([try Self.feature("lake", name: "added meanwhile")], [])
        try service.clearFeatures()
        #expect(try service.features().map { $0.properties["name"]?.stringValue } == ["added meanwhile"])
    }

    /// How many fences `port` lists (following the pages).
    static func fenceCount(port: UInt16) throws -> Int {
        let client = try TestClient(port: port)
        var count = 0
        var cursor: String?
        repeat {
            let page = T.parse(try client.request("GET", "/v1/fences?limit=1000" + (cursor.map { "&cursor=\($0)" } ?? "")).body)
            count += page["features"]?.arrayValue?.count ?? 0
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        return count
    }

    /// A bulk import through one node is answered once that node applied it, and reaches the other node
    /// and a node started afterwards: the watcher applies what arrived together in one call (one index
    /// build), not one build per fence. Then a group deleted through the second node is gone
    /// everywhere, the rest kept. (Kept small, 300 fences, so that it does not load the machine the
    /// other suites share; docs/cluster.md has the 2,000-fence timing.)
    @Test func aBulkImportReachesEveryNodeInOneGo() async throws {
        let node = try APINodeTests.Node()
        defer { node.stop() }
        let second = try APINodeTests.APINode(resources: node.resources)
        defer { second.stop() }
        let count = 300
        let features = (0..<count).map { i in
            T.square(id: "f\(i)", group: i % 2 == 0 ? "even" : "odd", name: "fence \(i)", offset: Double(i % 40) * 0.01)
        }
        let body = Array(("{\"type\":\"FeatureCollection\",\"features\":[" + features.joined(separator: ",") + "]}").utf8)
        let answer = try TestClient(port: node.server.port, timeout: 60).request("POST", "/v1/fences", body: body)
        #expect(answer.status == 200, "\(answer.text.prefix(300))")
        #expect(try Self.fenceCount(port: node.server.port) == count, "answered once applied on the node that took it")
        try await APINodeTests.poll(timeout: .seconds(20)) { try Self.fenceCount(port: second.server.port) == count }
        let third = try APINodeTests.APINode(resources: node.resources)
        defer { third.stop() }
        #expect(try Self.fenceCount(port: third.server.port) == count, "read at start")

        let deleted = try TestClient(port: second.server.port).request("DELETE", "/v1/fences?group=odd")
        #expect(deleted.status == 200, "\(deleted.text)")
        #expect(try Self.fenceCount(port: second.server.port) == count / 2)
        try await APINodeTests.poll(timeout: .seconds(20)) {
            try [node.server.port, third.server.port].allSatisfy { try Self.fenceCount(port: $0) == count / 2 }
        }
        #expect(try Self.name(of: "f2", port: third.server.port) == "fence 2")
        #expect(try Self.name(of: "f3", port: node.server.port) == nil)
    }
}
