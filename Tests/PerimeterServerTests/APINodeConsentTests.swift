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

/// Consent is a fact of the cluster, not of one API node: given or revoked through one node, every node
/// (and a node started later) refuses or accepts the same devices. Several API nodes of one cluster (a
/// real `nats-server`, an in-process ``ClusterWorker``), driven over loopback HTTP.
@Suite("API nodes share consent (NATS and HTTP on loopback)", .serialized,
       .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct APINodeConsentTests {
    /// Records each consent change a service announces, with when it arrived.
    final class ConsentRecorder: ExtendedGeofencingObserver {
        let changes = Mutex<[(device: DeviceID?, given: Bool, at: ContinuousClock.Instant)]>([])
        func onEntry(event: GeofencingEvent) {}
        func onDwell(event: GeofencingEvent) {}
        func onExit(event: GeofencingEvent) {}
        func onCross(event: GeofencingEvent) {}
        func onInside(event: GeofencingEvent) {}
        func onError(error: GeofencingError) {}
        func onUserConsentChanged(isConsentGiven: Bool) {
            changes.withLock { $0.append((nil, isConsentGiven, .now)) }
        }
        func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool) {
            changes.withLock { $0.append((device, isConsentGiven, .now)) }
        }
        var announced: [String] {
            changes.withLock { $0.map { "\($0.device?.rawValue ?? "service")=\($0.given)" } }
        }
        func arrival(of device: DeviceID?, given: Bool) -> ContinuousClock.Instant? {
            changes.withLock { $0.last { $0.device == device && $0.given == given }?.at }
        }
    }

    static func path(_ device: String) -> String {
        "/v1/devices/" + (device.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? device)
    }

    static func granted(_ value: Bool) -> [UInt8] { Array(T.json(["granted": .bool(value)]).utf8) }

    static func locations(_ updates: [JSONValue]) -> [UInt8] { Array(T.json(.array(updates)).utf8) }

    /// Messages the input stream holds for `device`.
    static func stored(_ device: String, _ resources: ClusterResources) throws -> UInt64 {
        let subject = resources.layout.inputSubject(of: DeviceID(device))
        return try resources.jetStream.subjects(of: resources.layout.inputStream, matching: subject)[subject] ?? 0
    }

    /// The events of `device` in `port`'s log.
    static func events(of device: String, port: UInt16) throws -> [JSONValue] {
        let all = T.parse(try TestClient(port: port).request("GET", "/v1/events?limit=1000").body)["events"]?.arrayValue ?? []
        return all.filter { $0["deviceId"]?.stringValue == device }
    }

    /// How long after `start` the change reached `recorder`, in milliseconds (0 when before).
    static func milliseconds(from start: ContinuousClock.Instant, to end: ContinuousClock.Instant?) -> Double {
        guard let end else { return .infinity }
        let elapsed = end - start
        return max(0, Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }

    /// A device's consent revoked on node 1 is refused by node 2 (its updates never reach the input
    /// stream, no event); given back on node 2 it is accepted by node 1 again, and the update makes its
    /// event. Each node announces each change once.
    @Test func deviceConsentRevokedOnOneNodeIsRefusedByAnother() async throws {
        let node = try APINodeTests.Node()
        defer { node.stop() }
        let second = try APINodeTests.APINode(resources: node.resources)
        defer { second.stop() }
        let (mine, theirs) = (ConsentRecorder(), ConsentRecorder())
        node.server.service.addObserver(mine)
        second.server.service.addObserver(theirs)
        try await APINodeTests.poll(timeout: .seconds(20)) { node.worker.ownedPartitions.count == 4 }
        let one = try TestClient(port: node.server.port)
        let two = try TestClient(port: second.server.port)
        #expect(try one.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)
        try await Task.sleep(for: .milliseconds(800))

        // Both nodes relay an update (outside) of the device, so both know it.
        let device = "ünï"
        #expect(try one.request("POST", "/v1/locations", body: Self.locations([T.update(device, 0, inside: false)])).status == 200)
        #expect(try two.request("POST", "/v1/locations", body: Self.locations([T.update(device, 10, inside: false)])).status == 200)
        #expect(T.parse(try two.request("GET", Self.path(device)).body)["consent"] == true)

        let sent = ContinuousClock.now
        let revoked = try one.request("PUT", Self.path(device) + "/consent", body: Self.granted(false))
        #expect(revoked.status == 200, "\(revoked.text)")
        #expect(try node.resources.consent.get(ConsentRecord.key(of: DeviceID(device))).map { ConsentRecord.isConsentGiven($0.value) } == false,
                "stored in the bucket before the PUT answered")
        try await APINodeTests.poll(timeout: .seconds(5)) { theirs.arrival(of: DeviceID(device), given: false) != nil }
        #expect(Self.milliseconds(from: sent, to: theirs.arrival(of: DeviceID(device), given: false)) < 5000)
        #expect(T.parse(try two.request("GET", Self.path(device)).body)["consent"] == false)

        let before = try Self.stored(device, node.resources)
        #expect(before == 2)
        let refused = try two.request("POST", "/v1/locations", body: Self.locations([T.update(device, 20, inside: true)]))
        #expect(refused.status == 403, "\(refused.text)")
        #expect(T.parse(refused.body)["type"] == "urn:perimeter:problem:consent-missing")
        try await Task.sleep(for: .milliseconds(800))
        #expect(try Self.stored(device, node.resources) == before, "nothing reached the input stream")
        #expect(try Self.events(of: device, port: node.server.port).isEmpty)

        // Given back on node 2: node 1 accepts the device again, and the update makes its entry.
        #expect(try two.request("PUT", Self.path(device) + "/consent", body: Self.granted(true)).status == 200)
        try await APINodeTests.poll(timeout: .seconds(5)) { mine.arrival(of: DeviceID(device), given: true) != nil }
        #expect(T.parse(try one.request("GET", Self.path(device)).body)["consent"] == true)
        #expect(try one.request("POST", "/v1/locations", body: Self.locations([T.update(device, 30, inside: true)])).status == 200)
        try await APINodeTests.poll(timeout: .seconds(10)) { try !Self.events(of: device, port: node.server.port).isEmpty }
        #expect(try Self.events(of: device, port: node.server.port).map { $0["type"] } == ["entry"])
        #expect(try Self.stored(device, node.resources) == before + 1)

        // Each node announced each change once: its own not again when the bucket echoed it.
        try await Task.sleep(for: .milliseconds(500))
        #expect(mine.announced == ["\(device)=false", "\(device)=true"])
        #expect(theirs.announced == ["\(device)=false", "\(device)=true"])

        // The watch latency: 20 changes on node 1, each timed from the PUT's sending to node 2's
        // announcement (and the PUT's own round trip beside it).
        var latencies: [Double] = [], roundTrips: [Double] = []
        for k in 0..<20 {
            let given = k % 2 == 1
            let sent = ContinuousClock.now
            #expect(try one.request("PUT", Self.path("van") + "/consent", body: Self.granted(given)).status == 200)
            roundTrips.append(Self.milliseconds(from: sent, to: .now))
            try await APINodeTests.poll(timeout: .seconds(5)) { theirs.changes.withLock { $0.count } == 3 + k }
            latencies.append(Self.milliseconds(from: sent, to: theirs.arrival(of: DeviceID("van"), given: given)))
        }
        latencies.sort()
        roundTrips.sort()
        print("consent: PUT on node 1 → applied on node 2, ms: median \(latencies[10]), max \(latencies[19]);",
              "the PUT's round trip: median \(roundTrips[10]), max \(roundTrips[19])")
        #expect(latencies[19] < 5000)
        #expect(theirs.changes.withLock { $0.count } == 22, "each change announced once")
    }

    /// Service-wide consent revoked on node 1: node 2 refuses every update; given back on node 2, node
    /// 1 accepts again. A third node started afterwards has both the service-wide and a device's
    /// consent from the start.
    @Test func serviceConsentIsSharedAndANodeStartedLaterReadsEveryConsent() async throws {
        let node = try APINodeTests.Node()
        defer { node.stop() }
        let second = try APINodeTests.APINode(resources: node.resources)
        defer { second.stop() }
        let (mine, theirs) = (ConsentRecorder(), ConsentRecorder())
        node.server.service.addObserver(mine)
        second.server.service.addObserver(theirs)
        let one = try TestClient(port: node.server.port)
        let two = try TestClient(port: second.server.port)

        #expect(try one.request("PUT", "/v1/consent", body: Self.granted(false)).status == 200)
        try await APINodeTests.poll(timeout: .seconds(5)) { theirs.arrival(of: nil, given: false) != nil }
        #expect(T.parse(try two.request("GET", "/v1/consent").body) == ["granted": false])
        let refused = try two.request("POST", "/v1/locations", body: Self.locations([T.update("bus", 0, inside: true)]))
        #expect(refused.status == 403, "\(refused.text)")
        #expect(try Self.stored("bus", node.resources) == 0, "nothing reached the input stream")

        #expect(try two.request("PUT", "/v1/consent", body: Self.granted(true)).status == 200)
        try await APINodeTests.poll(timeout: .seconds(5)) { mine.arrival(of: nil, given: true) != nil }
        #expect(T.parse(try one.request("GET", "/v1/consent").body) == ["granted": true])
        #expect(try one.request("POST", "/v1/locations", body: Self.locations([T.update("bus", 0, inside: true)])).status == 200)
        #expect(try Self.stored("bus", node.resources) == 1)

        // Both revoked before a third node starts: a device's on node 2, the service-wide on node 1.
        #expect(try two.request("PUT", Self.path("a b") + "/consent", body: Self.granted(false)).status == 200)
        #expect(try one.request("PUT", "/v1/consent", body: Self.granted(false)).status == 200)
        let third = try APINodeTests.APINode(resources: node.resources)
        defer { third.stop() }
        let three = try TestClient(port: third.server.port)
        let recorder = ConsentRecorder()
        third.server.service.addObserver(recorder)
        #expect(T.parse(try three.request("GET", "/v1/consent").body) == ["granted": false], "read at start")
        #expect(try three.request("POST", "/v1/locations", body: Self.locations([T.update("van", 0, inside: false)])).status == 403)
        // The service-wide consent given back (on node 2): the third node accepts other devices again,
        // and still refuses the device revoked before it started — the value it read at start.
        #expect(try two.request("PUT", "/v1/consent", body: Self.granted(true)).status == 200)
        try await APINodeTests.poll(timeout: .seconds(5)) { recorder.arrival(of: nil, given: true) != nil }
        #expect(recorder.announced == ["service=true"], "only the change made after its start")
        #expect(try three.request("POST", "/v1/locations", body: Self.locations([T.update("van", 0, inside: false)])).status == 200)
        let device = try three.request("POST", "/v1/locations", body: Self.locations([T.update("a b", 0, inside: false)]))
        #expect(device.status == 403, "\(device.text)")
        #expect(device.text.contains("device a b"), "\(device.text)")
        #expect(try Self.stored("a b", node.resources) == 0)
        #expect(try third.server.service.userConsent(for: DeviceID("a b")) == false)
        #expect(try third.server.service.userConsent(for: DeviceID("van")) == true)
    }

    /// Changes applied at positions out of order: a late older one does not undo a newer one, nor is
    /// it announced; one applied twice is announced once.
    @Test func aLateOlderChangeDoesNotUndoANewerOne() throws {
        let service = GeofencingService(tickInterval: nil, relay: PositionRelay())
        try service.configure(GeofencingOptions())
        let recorder = ConsentRecorder()
        service.addObserver(recorder)
        #expect(try service.applyRelayedConsent(false, for: "d", position: 5))
        #expect(try !service.applyRelayedConsent(true, for: "d", position: 3))
        #expect(try !service.applyRelayedConsent(false, for: "d", position: 5))
        #expect(try service.userConsent(for: "d") == false)
        #expect(try service.applyRelayedConsent(true, for: nil, position: 4), "each consent has its own order")
        #expect(try service.applyRelayedConsent(false, for: nil, position: 6))
        #expect(try !service.applyRelayedConsent(true, for: nil, position: 4))
        #expect(try service.userConsent() == false)
        // setUserConsent stores through the relay and applies at the position it got (7).
        try service.setUserConsent(true, for: "d")
        #expect(try service.userConsent(for: "d") == false, "the service-wide consent is still revoked")
        #expect(try !service.applyRelayedConsent(false, for: "d", position: 7), "its echo is ignored")
        #expect(recorder.announced == ["d=false", "service=false", "d=true"])
    }

    /// A relay that stores nothing but numbers consent changes from 7 on.
    final class PositionRelay: DetectionRelay, @unchecked Sendable {
        private let next = Mutex<UInt64>(7)
        func relay(_ updates: [LocationUpdate], completion: @escaping @Sendable (GeofencingError?) -> Void) { completion(nil) }
        func relayFences(upserted: [GeoJSON.Feature], removed: [FenceID]) throws(GeofencingError) -> Bool { false }
        func relayConsent(_ isConsentGiven: Bool, for device: DeviceID?) throws(GeofencingError) -> UInt64? {
            next.withLock { position in
                defer { position += 1 }
                return position
            }
        }
    }

    /// The keys: one per device, the id round-tripping through its encoding (dots, spaces, non-ASCII,
    /// the empty id), and the service-wide key apart from every device's.
    @Test func consentKeysRoundTripEveryDeviceID() {
        for id in ["van", "a b", "x.y", "car*", "ünï", "", "=", "service", "device.x", "a/b>c"] {
            let key = ConsentRecord.key(of: DeviceID(id))
            #expect(key != ConsentRecord.serviceKey)
            #expect(key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_=.".contains($0)) }, "\(key) is a valid key")
            #expect(ConsentRecord.owner(ofKey: key) == .device(DeviceID(id)), "\(id) round-trips")
        }
        #expect(ConsentRecord.owner(ofKey: ConsentRecord.key(of: nil)) == .service)
        #expect(ConsentRecord.owner(ofKey: "fence-1") == nil)
        #expect(ConsentRecord.owner(ofKey: "device.=Z") == nil)
        #expect(ConsentRecord.isConsentGiven(ConsentRecord.value(false)) == false)
        #expect(ConsentRecord.isConsentGiven(ConsentRecord.value(true)) == true)
        #expect(ConsentRecord.isConsentGiven(Array("yes".utf8)) == nil)
    }
}
