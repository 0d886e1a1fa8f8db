import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterNATS
import PerimeterTestSupport
import Synchronization
import Testing

@Suite("Stream retention (NATS on loopback)", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct RetentionTests {
    static func layout(partitions: Int = 4) -> ClusterLayout {
        ClusterLayout(prefix: "k\(UUID().uuidString.prefix(8).lowercased())", partitioning: DevicePartitioning(count: partitions)!)
    }

    static func cleanUp(_ js: JetStream, _ layout: ClusterLayout) {
        try? js.deleteStream(layout.inputStream)
        try? js.deleteStream(layout.eventStream)
        for bucket in [ClusterResources.leasesBucket(layout), ClusterResources.snapshotsBucket(layout), ClusterResources.fencesBucket(layout)] {
            try? js.deleteKeyValue(bucket)
        }
    }

    /// The limits reach the streams; the defaults are a day for both and no byte limit.
    @Test func theStreamsGetTheLimitsGivenAndTheDefaults() throws {
        let js = try SharedServer.jetStream()
        let (given, defaulted) = (Self.layout(), Self.layout())
        defer { Self.cleanUp(js, given); Self.cleanUp(js, defaulted) }
        let retention = ClusterRetention(input: .init(maxAge: .seconds(30), maxBytes: 5 << 20), events: .init(maxAge: .seconds(7200)))
        _ = try ClusterResources.open(on: js, layout: given, leaseDuration: .seconds(10), retention: retention)
        let input = try js.streamConfiguration(given.inputStream)
        try check(input.maxAge == .seconds(30) && input.maxBytes == 5 << 20 && input.maxMessages == nil, "input: \(input)")
        try check(input.duplicateWindow == .seconds(30), "a duplicate window no longer than the age: \(input.duplicateWindow)")
        let events = try js.streamConfiguration(given.eventStream)
        try check(events.maxAge == .seconds(7200) && events.maxBytes == nil && events.duplicateWindow == .seconds(120), "events: \(events)")
        _ = try ClusterResources.open(on: js, layout: defaulted, leaseDuration: .seconds(10))
        for stream in [defaulted.inputStream, defaulted.eventStream] {
            let configuration = try js.streamConfiguration(stream)
            try check(configuration.maxAge == .seconds(86_400) && configuration.maxBytes == nil && configuration.maxMessages == nil,
                      "\(stream) by default: \(configuration)")
        }
    }

    /// A process given other limits than the streams have is refused with the flag and both values;
    /// the same limits open; `updatingRetention` changes the streams' limits, after which the new ones
    /// open and the old ones are refused.
    @Test func otherLimitsAreRefusedNamingTheFlagAndBothValuesOrUpdatedOnRequest() throws {
        let js = try SharedServer.jetStream()
        let layout = Self.layout()
        defer { Self.cleanUp(js, layout) }
        let first = ClusterRetention(input: .init(maxAge: .seconds(3600), maxBytes: 64 << 20), events: .init(maxAge: .seconds(7200)))
        _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10), retention: first)
        _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10), retention: first)
        do {
            _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10))
            throw Failed("the defaults were accepted by streams with other limits")
        } catch let error as NATSError {
            let text = error.description
            try check(text.contains(layout.inputStream), "names the stream: \(text)")
            try check(text.contains("--input-max-age 24h (the stream keeps 1h)"), "names the age flag and both values: \(text)")
            try check(text.contains("--input-max-bytes none (the stream keeps 67108864)"), "names the bytes flag and both values: \(text)")
        }
        var second = first
        second.events.maxAge = .seconds(86_400)
        do {
            _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10), retention: second)
            throw Failed("another events age was accepted")
        } catch let error as NATSError {
            try check(error.description.contains(layout.eventStream) && error.description.contains("--events-max-age 24h (the stream keeps 2h)"),
                      "names the events flag: \(error)")
        }
        _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10), retention: second, updatingRetention: true)
        try check(try js.streamConfiguration(layout.eventStream).maxAge == .seconds(86_400), "the events stream was updated")
        _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10), retention: second)
        #expect(throws: NATSError.self) { try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10), retention: first) }
        // The update changes limits only: another replica count is still refused in the server's words.
        #expect(throws: NATSError.self) {
            try ClusterResources.open(on: js, layout: layout, replicas: 3, leaseDuration: .seconds(10), retention: second, updatingRetention: true)
        }
    }

    static func update(_ index: Int) -> LocationUpdate {
        LocationUpdate(device: "van", time: Date(timeIntervalSince1970: 1_780_000_000 + Double(index) * 5), latitude: 0,
                       longitude: Double(index) * 0.0001)
    }

    static func publish(_ range: Range<Int>, js: JetStream, layout: ClusterLayout) throws {
        for result in js.publishBatch(range.map { InputRecord.update(update($0)).message(in: layout) }) { _ = try result.get() }
    }

    /// Input a partition needs that aged out before it read it is reported, not skipped silently: a new
    /// owner whose snapshot is older than the stream's first message, and an owner that fell behind by
    /// more than the stream keeps (found at its next snapshot). Each run is reported once, with the
    /// sequences, and the worker goes on from the first record still held.
    @Test func inputThatAgedOutBeforeItWasReadIsReportedNotSkippedSilently() throws {
        let js = try SharedServer.jetStream()
        let layout = Self.layout(partitions: 1)
        defer { Self.cleanUp(js, layout) }
        // A tiny count limit ages input out at once; an age limit removes it the same way, later.
        let retention = ClusterRetention(input: .init(maxMessages: 6), events: .init())
        let resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(30), retention: retention)
        let warnings = Lines()
        func owner(_ name: String) throws -> PartitionWorker {
            guard let lease = try PartitionLease.acquire(in: resources.leases, partition: 0, owner: name, duration: .seconds(30)) else {
                throw Failed("\(name): partition 0 not free")
            }
            return try PartitionWorker.resume(jetStream: js, layout: layout, lease: lease, snapshots: resources.snapshots,
                                              warning: { line in warnings.append(line) })
        }

        try Self.publish(0..<3, js: js, layout: layout)                  // sequences 1–3
        let first = try owner("first")
        try drain(first)
        try check(try first.saveSnapshot(to: resources.snapshots), "snapshot at 3")
        first.stop(releasing: true)
        try check(first.agedOutInput.isEmpty && warnings.all.isEmpty, "nothing missing while the stream holds it all")

        try Self.publish(3..<6, js: js, layout: layout)                  // 4–6: the stream holds 1–6
        let second = try owner("second")
        try check(second.agedOutInput.isEmpty, "4 is still there: \(second.agedOutInput)")
        second.stop(releasing: true)

        try Self.publish(6..<10, js: js, layout: layout)                 // 7–10: the stream holds 5–10, 4 is gone
        let third = try owner("third")
        try check(third.agedOutInput == [4...4] && third.statistics.agedOutSequences == 1, "sequence 4 reported: \(third.agedOutInput)")
        let said = warnings.all
        try check(said.count == 1 && said[0].contains("input sequences 4–4 of \(layout.inputStream) aged out")
                  && said[0].contains("now starts at 5") && said[0].contains("--input-max-age"), "one clear line: \(said)")
        try drain(third)
        try check(third.inputSequence == 10 && third.statistics.updates == 6, "goes on from 5: \(third.inputSequence), \(third.statistics)")

        // Falling behind: 8 more while it reads nothing; the stream keeps 13–18, so 11 and 12 are gone.
        try Self.publish(10..<18, js: js, layout: layout)
        try check(try third.saveSnapshot(to: resources.snapshots), "snapshot")
        try check(third.agedOutInput == [4...4, 11...12] && third.statistics.agedOutSequences == 3, "11–12 reported: \(third.agedOutInput)")
        try check(try third.checkRetainedInput() == nil, "each run once")
        try drain(third)
        try check(third.inputSequence == 18 && third.statistics.updates == 12, "goes on from 13: \(third.statistics)")
        try check(try third.checkRetainedInput() == nil && warnings.all.count == 2, "nothing more once caught up")
        third.stop(releasing: true)
    }

    /// `perimeter worker` with an age other than the stream's exits 69 naming the flag and both values.
    @Test func aWorkerGivenOtherLimitsThanTheStreamsExitsNamingTheFlag() throws {
        guard WorkerProcess.binary != nil else { throw Failed("the perimeter executable is not built") }
        let js = try SharedServer.jetStream()
        let layout = Self.layout()
        defer { Self.cleanUp(js, layout) }
        _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10))
        let (status, error) = try WorkerCommandTests.run(["--nats", try SharedServer.server.get().url, "--prefix", layout.prefix,
                                                          "--partitions", "4", "--input-max-age", "36h"])
        try check(status == 69 && error.contains("--input-max-age 36h (the stream keeps 24h)"), "\(status) \(error)")
    }
}

/// Lines collected from any thread.
final class Lines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
