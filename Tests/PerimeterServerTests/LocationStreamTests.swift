import Foundation
import PerimeterEngine
import PerimeterGeoJSON
@testable import PerimeterHTTP
import PerimeterServer
import PerimeterService
import Synchronization
import Testing

/// `event: location` messages in process: who gets them, the per-device throttle, and the stream's
/// buffer limit. The streams here are not attached to a connection, so what they buffer is what a
/// client would read.
@Suite("Device positions on the event stream")
struct LocationStreamTests {
    static func hub(interval: Double) throws -> EventHub {
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        return EventHub(service: service, metrics: Metrics(), locationInterval: interval)
    }

    static func buffered(_ stream: HTTPStream) -> String {
        stream.state.withLock { String(decoding: $0.buffer[$0.offset...], as: UTF8.self) }
    }

    /// The `data:` objects of the `location` messages buffered in `stream`.
    static func positions(_ stream: HTTPStream) -> [JSONValue] {
        buffered(stream).components(separatedBy: "\n\n").compactMap { block -> JSONValue? in
            let lines = block.split(separator: "\n")
            guard lines.contains("event: location") else { return nil }
            return lines.first { $0.hasPrefix("data: ") }.map { T.parse(Array($0.dropFirst(6).utf8)) }
        }
    }

    static func update(_ device: String, _ latitude: Double) -> LocationUpdate {
        LocationUpdate(device: DeviceID(device), time: Date(timeIntervalSince1970: 1_700_000_000 + latitude),
                       latitude: latitude, longitude: 7.5, horizontalAccuracy: 5)
    }

    @Test func onlyClientsThatAskedGetPositionsOfTheirDevices() throws {
        let hub = try Self.hub(interval: 0)
        let all = HTTPStream(), vans = HTTPStream(), none = HTTPStream()
        try hub.subscribe(all, filter: EventFilter(locations: true), after: nil)
        try hub.subscribe(vans, filter: EventFilter(devices: ["van"], locations: true), after: nil)
        try hub.subscribe(none, filter: EventFilter(), after: nil)
        hub.publishLocations([Self.update("van", 10), Self.update("car", 20)])

        #expect(Self.positions(all).map { $0["deviceId"] } == ["van", "car"])
        #expect(Self.positions(vans).map { $0["deviceId"] } == ["van"])
        #expect(Self.positions(none).isEmpty)
        #expect(!Self.buffered(all).contains("id:"))
        let van = Self.positions(vans)[0]
        #expect(van["latitude"]?.doubleValue == 10 && van["longitude"]?.doubleValue == 7.5 && van["accuracy"]?.doubleValue == 5)
        #expect(van["time"] == "2023-11-14T22:13:30.000Z")
    }

    @Test func aBatchSendsTheLatestPositionOfEachDevice() throws {
        let hub = try Self.hub(interval: 0)
        let stream = HTTPStream()
        try hub.subscribe(stream, filter: EventFilter(locations: true), after: nil)
        hub.publishLocations([Self.update("van", 1), Self.update("car", 2), Self.update("van", 3)])
        #expect(Self.positions(stream).map { $0["latitude"]?.doubleValue } == [3, 2])
    }

    @Test func positionsWithinTheIntervalWait() throws {
        let hub = try Self.hub(interval: 3_600)
        let stream = HTTPStream()
        try hub.subscribe(stream, filter: EventFilter(locations: true), after: nil)
        for latitude in 1...50 { hub.publishLocations([Self.update("van", Double(latitude))]) }
        hub.publishLocations([Self.update("car", 60)])
        // The first of each device goes at once; the rest wait an hour for the interval.
        #expect(Self.positions(stream).map { $0["latitude"]?.doubleValue } == [1, 60])
    }

    @Test func theLastPositionOfABurstIsSentAfterTheInterval() async throws {
        let hub = try Self.hub(interval: 0.05)
        let stream = HTTPStream()
        try hub.subscribe(stream, filter: EventFilter(locations: true), after: nil)
        for latitude in 1...20 { hub.publishLocations([Self.update("van", Double(latitude))]) }
        var waited = 0
        while Self.positions(stream).last?["latitude"]?.doubleValue != 20 && waited < 1_000 {
            try await Task.sleep(nanoseconds: 10_000_000)
            waited += 1
        }
        let latitudes = Self.positions(stream).compactMap { $0["latitude"]?.doubleValue }
        #expect(latitudes.last == 20)
        #expect(latitudes == latitudes.sorted() && Set(latitudes).count == latitudes.count)
    }

    @Test func simulationsReportAcceptedUpdates() async throws {
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        let heard = Mutex<[LocationUpdate]>([])
        let runner = SimulationRunner(service: service, onAccepted: { update in heard.withLock { $0.append(update) } })
        let request = SimulationRequest(device: "sim-van", path: [.init(latitude: 44.6, longitude: -110.5),
                                                                    .init(latitude: 44.6, longitude: -110.49)],
                                        speed: 20, interval: 1, timeScale: 1_000)
        guard case .string(let id)? = try runner.start(request)["id"] else {
            Issue.record("no simulation id")
            return
        }
        var waited = 0
        while runner.runningCount > 0 && waited < 1_000 {
            try await Task.sleep(nanoseconds: 10_000_000)
            waited += 1
        }
        let finished = try runner.simulation(id: id)
        #expect(finished["status"] == "finished")
        let sent = heard.withLock { $0 }
        #expect(sent.count == Int(finished["sent"]?.doubleValue ?? -1) && !sent.isEmpty)
        #expect(sent.allSatisfy { $0.device == "sim-van" })
    }

    @Test func aStreamThatIsNotReadIsCutAtItsBufferLimit() {
        let stream = HTTPStream(bufferLimit: 100)
        #expect(stream.write(Array(repeating: 65, count: 60)))
        #expect(!stream.isClosed && !stream.wasCut)
        #expect(!stream.write(Array(repeating: 66, count: 60)))
        #expect(stream.isClosed && stream.wasCut)
        // Dropped, not sent later: a client that stopped reading would never take it.
        #expect(Self.buffered(stream) == "")
    }
}
