import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService
import Testing

/// One suite that every ``GeofencingStore`` must pass.
@Suite("Store conformance")
struct StoreConformanceTests {
    static func device(_ id: String, fences: [String], count: UInt64 = 3) -> DetectionEngine.DeviceSnapshot {
        DetectionEngine.DeviceSnapshot(
            device: DeviceID(id), lastTime: 1_750_000_000.125, lastCoordinate: Coordinate(latitude: 48.1, longitude: 2.3),
            updateCount: count,
            memberships: fences.enumerated().map { i, f in
                .init(fence: FenceID(f), entryTime: 1_750_000_000 + Double(i) / 3, visitSequence: UInt64(i),
                      ordinal: i % 3 == 2 ? nil : UInt32(i), hasDwelled: i % 2 == 0)
            },
            instantVisits: fences.isEmpty ? [] : [.init(fence: "gone", entryTime: 1_750_000_000.125, ordinal: UInt32(count))])
    }

    /// Event `n`; every other one carries its fence's name, group, properties (of every JSON kind) and
    /// a message, the others none of them.
    static func event(_ n: Int64) -> GeofencingEvent {
        let labelled = n % 2 == 1
        let properties: [String: JSONValue] = labelled
            ? ["name": .string("Fence \(n) é😀"), "rank": .integer(n), "area": 0.1, "tags": ["a", nil, true, -0.5e-7],
               "nested": ["deep": ["x": "\"q\"\n"]], "perimeter:message": "{name}"]
            : [:]
        return GeofencingEvent(sequence: n, event: GeofenceEvent(
            id: "id\(n)", visitID: "visit\(n)", kind: GeofenceEventKind.allCases[Int(n) % 3], fence: FenceID("f\(n % 4)"),
            device: DeviceID("d\(n % 3)"), time: Date(timeIntervalSince1970: 1_750_000_000.1 + Double(n) / 7),
            coordinate: Coordinate(latitude: 48 + Double(n) / 1e6, longitude: 2.5), timeInside: n % 3 == 2 ? 12.5 : nil,
            observedAt: Date(timeIntervalSince1970: 1_750_000_100.3 + Double(n) / 7), reason: n % 2 == 0 ? .left : .timeout),
            fenceName: labelled ? "Fence \(n) é😀" : nil, group: labelled ? "g\(n)" : nil, properties: properties,
            message: labelled ? (n == 1 ? "" : "Fence \(n) é😀") : nil)
    }

    static func fence(_ id: String, position: Int64, group: String? = nil) -> StoredFence {
        StoredFence(id: FenceID(id), position: position, feature: #"{"type":"Feature","id":"\#(id)"}"#, group: group,
                    name: "name \(id)", dwellTime: 60, expiresAt: nil)
    }

    @Test("an empty store loads as empty", arguments: StoreKind.allCases)
    func empty(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        #expect(try harness.open().load() == StoredState())
        #expect(try harness.open().events(after: 0, limit: 10).isEmpty)
    }

    @Test("what is committed is loaded back, after a restart", arguments: StoreKind.allCases)
    func roundTrip(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        var changes = StoreChanges()
        changes.fences = [.upsert(Self.fence("b", position: 2, group: "g")), .upsert(Self.fence("a", position: 1))]
        changes.devices = [DeviceChange(snapshot: Self.device("d1", fences: ["a", "b"]), presenceChanged: true),
                           DeviceChange(snapshot: Self.device("d0", fences: []), presenceChanged: false)]
        changes.events = (1...5).map(Self.event)
        changes.serviceConsent = false
        changes.deviceConsents = ["d1": true, "d2": false]
        changes.processedUpdates = 42
        try harness.open().commit(changes)

        let state = try harness.open().load()
        #expect(state.fences.map(\.id) == ["a", "b"])
        #expect(state.fences[1] == Self.fence("b", position: 2, group: "g"))
        #expect(state.devices == [Self.device("d1", fences: ["a", "b"]), Self.device("d0", fences: [])])
        #expect(state.serviceConsent == false)
        #expect(state.deviceConsents == ["d1": true, "d2": false])
        #expect(state.lastEventSequence == 5)
        #expect(state.processedUpdates == 42)
        #expect(try harness.open().events(after: 0, limit: 100) == (1...5).map(Self.event))
    }

    @Test("presence is rewritten only when marked changed; device order is first-write order", arguments: StoreKind.allCases)
    func presenceUpdates(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        let store = try harness.open()
        var first = StoreChanges()
        first.fences = [.upsert(Self.fence("a", position: 1)), .upsert(Self.fence("b", position: 2))]
        first.devices = [DeviceChange(snapshot: Self.device("z", fences: ["a"]), presenceChanged: true),
                         DeviceChange(snapshot: Self.device("y", fences: ["b"]), presenceChanged: true)]
        try store.commit(first)
        var second = StoreChanges()
        second.devices = [DeviceChange(snapshot: Self.device("z", fences: ["a", "b"], count: 9), presenceChanged: false),
                          DeviceChange(snapshot: Self.device("y", fences: [], count: 7), presenceChanged: true)]
        try store.commit(second)
        let state = try harness.open().load()
        #expect(state.devices.map(\.device) == ["z", "y"])
        #expect(state.devices[0].updateCount == 9)
        #expect(state.devices[0].memberships.map(\.fence) == ["a"])
        #expect(state.devices[1].memberships.isEmpty)
    }

    @Test("removing a fence removes presence in it; upsert keeps the position", arguments: StoreKind.allCases)
    func fenceRemoval(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        let store = try harness.open()
        var changes = StoreChanges()
        changes.fences = [.upsert(Self.fence("a", position: 1)), .upsert(Self.fence("b", position: 2))]
        changes.devices = [DeviceChange(snapshot: Self.device("d", fences: ["a", "b"]), presenceChanged: true)]
        try store.commit(changes)
        var removal = StoreChanges()
        removal.fences = [.remove("a"), .upsert(Self.fence("b", position: 99, group: "new"))]
        try store.commit(removal)
        var state = try harness.open().load()
        #expect(state.fences == [Self.fence("b", position: 2, group: "new")])
        #expect(state.devices[0].memberships.map(\.fence) == ["b"])

        var clear = StoreChanges()
        clear.fences = [.removeAll]
        try harness.open().commit(clear)
        state = try harness.open().load()
        #expect(state.fences.isEmpty)
        #expect(state.devices[0].memberships.isEmpty)
    }

    @Test("the event log pages by sequence and refuses gaps atomically", arguments: StoreKind.allCases)
    func eventLog(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        let store = try harness.open()
        var changes = StoreChanges()
        changes.events = (1...25).map(Self.event)
        try store.commit(changes)
        #expect(try store.events(after: 10, limit: 5).map(\.sequence) == [11, 12, 13, 14, 15])
        #expect(try store.events(after: 23, limit: 5).map(\.sequence) == [24, 25])
        #expect(try store.events(after: 25, limit: 5).isEmpty)

        var gap = StoreChanges()
        gap.events = [Self.event(27)]
        gap.processedUpdates = 5
        #expect(throws: (any Error).self) { try store.commit(gap) }
        #expect(try harness.open().load().processedUpdates == 0, "a failed commit changes nothing")
        #expect(try harness.open().load().lastEventSequence == 25)
    }
}

@Suite("Store conformance: detection option state")
struct StoreOptionStateConformanceTests {
    @Test("option and stream state, engine counters and fence addition sequences round-trip, and are cleared",
          arguments: StoreKind.allCases)
    func optionState(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        let here = Coordinate(latitude: -0.0, longitude: 2.25)
        var snapshot = StoreConformanceTests.device("d1", fences: ["a"])
        snapshot.options = .init(
            pending: [.init(fence: "b", toInside: true, since: 10.5, observedAt: 11, coordinate: here, sequence: 7)],
            dwellRepeats: [.init(fence: "a", visitSequence: 0, count: 4)],
            anchor: .init(time: 11, coordinate: here, accuracy: 12.5), lastSequence: 99)
        snapshot.stream = .init(buffered: [.init(fix: .init(time: 12, coordinate: here, accuracy: nil), arrival: 5)],
                                newest: 12, recent: [.init(time: 11, coordinate: here, accuracy: nil)])
        var changes = StoreChanges()
        var fence = StoreConformanceTests.fence("a", position: 1)
        fence.additionSequence = 17
        changes.fences = [.upsert(fence), .upsert(StoreConformanceTests.fence("b", position: 2))]
        changes.devices = [DeviceChange(snapshot: snapshot, presenceChanged: true)]
        changes.acceptedSequence = 123
        changes.arrivals = 6
        try harness.open().commit(changes)

        let state = try harness.open().load()
        #expect(state.devices == [snapshot])
        #expect(state.devices.first?.options?.anchor?.coordinate.latitude.sign == .minus, "bit for bit")
        #expect(state.fences.map(\.additionSequence) == [17, nil])
        #expect(state.acceptedSequence == 123)
        #expect(state.arrivals == 6)

        var cleared = snapshot
        cleared.options = nil
        cleared.stream = nil
        var next = StoreChanges()
        next.devices = [DeviceChange(snapshot: cleared, presenceChanged: false)]
        try harness.open().commit(next)
        #expect(try harness.open().load().devices == [cleared])
    }
}

/// A fence's feature text given as UTF-8 bytes (a slice of an import's request body) instead of a `String`.
@Suite("Store conformance: feature texts given as bytes")
struct StoredFenceBytesTests {
    /// A body holding several texts, the one wanted in the middle: slices do not start at index 0.
    static let text = #"{"type":"Feature","id":"é😀","properties":{"q":"\"x\"\n"},"geometry":null}"#
    static let body = Array(("[" + #"{"type":"Feature","id":"first"}"# + "," + text + ",{}]").utf8)
    static var slice: ArraySlice<UInt8> {
        let start = 1 + #"{"type":"Feature","id":"first"}"#.utf8.count + 1
        return body[start..<(start + text.utf8.count)]
    }

    @Test func bytesAndStringAreTheSameFence() {
        let bytes = StoredFence(id: "é😀", position: 3, featureUTF8: Self.slice, group: "g", name: "n", dwellTime: 5,
                                expiresAt: 7, additionSequence: 9)
        let string = StoredFence(id: "é😀", position: 3, feature: Self.text, group: "g", name: "n", dwellTime: 5,
                                 expiresAt: 7, additionSequence: 9)
        #expect(bytes.feature == Self.text)
        #expect(bytes == string)
        #expect(bytes.hashValue == string.hashValue)
        #expect(Set([bytes, string]).count == 1)
        #expect(bytes.featureByteCount == Self.text.utf8.count && string.featureByteCount == Self.text.utf8.count)
        #expect(bytes.withFeatureUTF8 { Array($0) } == Array(Self.text.utf8))
        #expect(string.withFeatureUTF8 { Array($0) } == Array(Self.text.utf8))
        var changed = bytes
        changed.feature = "other"
        #expect(changed.feature == "other" && changed != string && changed.featureByteCount == 5)
        #expect(StoredFence(id: "e", position: 1, featureUTF8: []).feature == "")
    }

    @Test("a fence given as bytes is stored and loaded as its text", arguments: StoreKind.allCases)
    func storedAsText(kind: StoreKind) throws {
        let harness = StoreHarness(kind)
        var changes = StoreChanges()
        changes.fences = [.upsert(StoredFence(id: "é😀", position: 1, featureUTF8: Self.slice, name: "n")),
                          .upsert(StoredFence(id: "empty", position: 2, featureUTF8: Self.body[0..<0]))]
        try harness.open().commit(changes)
        let loaded = try harness.open().load().fences
        #expect(loaded == [StoredFence(id: "é😀", position: 1, feature: Self.text, name: "n"),
                           StoredFence(id: "empty", position: 2, feature: "")])
        #expect(loaded.first?.withFeatureUTF8 { Array($0) } == Array(Self.text.utf8))
    }
}
