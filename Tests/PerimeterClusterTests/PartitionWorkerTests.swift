import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterNATS
import PerimeterTestSupport
import Testing

/// Devices driving east along the equator through two fences, a few seconds apart, some with pauses.
struct Drive {
    static let fences = [
        Fence(id: "depot", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0), radius: 300)), dwellTime: 30),
        Fence(id: "yard", region: Region(.polygons([Polygon(rings: [[
            Coordinate(latitude: -0.003, longitude: 0.008), Coordinate(latitude: -0.003, longitude: 0.012),
            Coordinate(latitude: 0.003, longitude: 0.012), Coordinate(latitude: 0.003, longitude: 0.008),
            Coordinate(latitude: -0.003, longitude: 0.008),
        ]])]))),
    ]

    /// Every update, ordered by time (then device), as a client would send them.
    static func updates(devices: Int, seed: UInt64) -> [LocationUpdate] {
        var random = SplitMix64(seed: seed)
        var all: [LocationUpdate] = []
        let start = 1_780_000_000.0
        for d in 0..<devices {
            let id = DeviceID(d % 3 == 0 ? "van \(d).α*" : "van-\(d)")   // some ids need encoding
            let latitude = Double(Int(random.next() % 5)) * 0.0005 - 0.001
            var time = start + Double(random.next() % 20)
            var longitude = -0.006
            while longitude < 0.016 {
                all.append(LocationUpdate(device: id, time: Date(timeIntervalSince1970: time), latitude: latitude, longitude: longitude))
                time += 5
                longitude += random.next() % 4 == 0 ? 0 : 0.0004   // a pause now and then: dwells
            }
        }
        return all.sorted { ($0.time, $0.device) < ($1.time, $1.device) }
    }

    /// ``updates(devices:seed:)`` moved in time so that the drive starts now: for workers whose
    /// partition clocks tick at the wall clock.
    static func updatesStartingNow(devices: Int, seed: UInt64) -> [LocationUpdate] {
        let shift = Date().timeIntervalSince1970 - 1_780_000_000
        return updates(devices: devices, seed: seed).map {
            var update = $0
            update.time = $0.time.addingTimeInterval(shift)
            return update
        }
    }

    /// What one process gives for the same updates.
    static func singleProcessEvents(_ updates: [LocationUpdate]) -> [GeofenceEvent] {
        var engine = DetectionEngine(fences: fences)
        var events: [GeofenceEvent] = []
        for update in updates { _ = engine.process(update, into: &events) }
        return events
    }
}

/// A fresh layout (its own streams) on the shared server.
func freshLayout(partitions: Int, js: JetStream) throws -> ClusterLayout {
    let layout = ClusterLayout(prefix: "t\(UUID().uuidString.prefix(8).lowercased())", partitioning: DevicePartitioning(count: partitions)!)
    try js.addStream(layout.inputStreamConfiguration())
    try js.addStream(layout.eventStreamConfiguration())
    return layout
}

func publishInput(_ updates: [LocationUpdate], js: JetStream, layout: ClusterLayout) throws {
    for chunk in stride(from: 0, to: updates.count, by: 500) {
        let messages = updates[chunk..<min(chunk + 500, updates.count)].map { InputRecord.update($0).message(in: layout) }
        for result in js.publishBatch(messages) { _ = try result.get() }
    }
}

/// Every stored event, in stream order.
func storedEvents(js: JetStream, layout: ClusterLayout) throws -> [GeofenceEvent] {
    let total = try js.streamState(layout.eventStream).messages
    let consumer = try js.pullConsumer(stream: layout.eventStream, filterSubject: "\(layout.prefix).events.*", startSequence: 1)
    defer { consumer.close() }
    var messages: [StreamMessage] = []
    while UInt64(messages.count) < total {
        let batch = try consumer.fetch(max: 1000, timeout: .seconds(5))
        if batch.isEmpty { throw Failed("read \(messages.count) of \(total) events") }
        messages += batch
    }
    return try messages.map { message in
        guard let event = EventRecord.event(message) else { throw Failed("message \(message.sequence) is not an event") }
        try check(message.messageID == event.id, "message id = event id")
        return event
    }
}

/// Steps until the worker finds no more input.
@discardableResult
func drain(_ worker: PartitionWorker, maxMessages: Int = 200) throws -> PartitionWorker.Step {
    while true {
        let step = try worker.step(maxMessages: maxMessages, wait: .milliseconds(300))
        if case .processed = step { continue }
        return step
    }
}

func perDevice(_ events: [GeofenceEvent]) -> [DeviceID: [String]] {
    Dictionary(grouping: events, by: \.device).mapValues { $0.map(\.id) }
}

@Suite("Partition workers on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct PartitionWorkerTests {
    /// Reopening the input mid-stream, as after its server died: the new consumer is created off the
    /// caller's thread while steps go on with the old one, and it starts where the worker was when the
    /// reopen began, so both deliver some records — each is applied once, and the events are the
    /// single-process ones.
    @Test func reopeningTheInputMidStreamAppliesEachRecordOnce() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let updates = Drive.updates(devices: 6, seed: 5)
            try publishInput(updates, js: js, layout: layout)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            guard let lease = try PartitionLease.acquire(in: leases, partition: 0, owner: "w", duration: .seconds(30)) else {
                throw Failed("not acquired")
            }
            let worker = try PartitionWorker(jetStream: js, layout: layout, lease: lease, engine: DetectionEngine(fences: Drive.fences))
            while worker.inputSequence < UInt64(updates.count / 3) { _ = try worker.step(maxMessages: 20, wait: .milliseconds(300)) }
            try check(worker.reopenInput() && worker.isReopeningInput, "a reopen begins")
            try check(worker.reopenInput(), "a second call while one is under way changes nothing")
            // The old consumer keeps delivering until the new one is taken.
            _ = try worker.step(maxMessages: 20, wait: .milliseconds(300))
            let deadline = Date().addingTimeInterval(20)
            while worker.isReopeningInput {
                if Date() > deadline { throw Failed("the new consumer never came") }
                _ = try worker.step(maxMessages: 20, wait: .milliseconds(50))
            }
            try check(try drain(worker) == .idle, "drained")
            try check(worker.statistics.inputReopens == 1, "one reopen: \(worker.statistics)")
            try check(worker.statistics.updates + worker.statistics.rejected == updates.count,
                      "every update applied once: \(worker.statistics.updates) + \(worker.statistics.rejected) of \(updates.count)")
            let expected = Drive.singleProcessEvents(updates)
            let stored = try storedEvents(js: js, layout: layout)
            try check(stored.count == expected.count && Set(stored) == Set(expected), "the single-process events: \(stored.count) of \(expected.count)")
            try check(worker.statistics.duplicateEvents == 0, "nothing published twice")
            worker.stop(releasing: true)
            try js.deleteKeyValue(leases.name)
        }
    }

    @Test func workersGiveTheSingleProcessEventsByIdAndPerDeviceOrder() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 4, js: js)
            let updates = Drive.updates(devices: 12, seed: 1)
            try publishInput(updates, js: js, layout: layout)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            var applied = 0
            for partition in 0..<4 {
                guard let lease = try PartitionLease.acquire(in: leases, partition: partition, owner: "w", duration: .seconds(30)) else {
                    throw Failed("partition \(partition) not acquired")
                }
                let worker = try PartitionWorker(jetStream: js, layout: layout, lease: lease, engine: DetectionEngine(fences: Drive.fences))
                try check(try drain(worker) == .idle, "drained")
                applied += worker.statistics.updates
                try check(worker.statistics.rejected == 0 && worker.statistics.malformed == 0, "\(worker.statistics)")
                worker.stop(releasing: true)
            }
            try check(applied == updates.count, "every update applied once: \(applied) of \(updates.count)")
            let expected = Drive.singleProcessEvents(updates)
            let stored = try storedEvents(js: js, layout: layout)
            try check(expected.count > 30, "a meaningful drive: \(expected.count) events")
            try check(Set(expected.map(\.kind)).isSuperset(of: [.entry, .exit, .dwell]), "entries, exits and dwells")
            try check(Set(stored.map(\.id)) == Set(expected.map(\.id)) && stored.count == expected.count, "same events by id")
            try check(perDevice(stored) == perDevice(expected), "same per-device order")
            try check(Set(stored) == Set(expected), "same events in every field")
            try js.deleteKeyValue(leases.name)
        }
    }

    @Test func aTakeoverAfterAnExpiredLeaseNeitherLosesNorDoublesAnEvent() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let updates = Drive.updates(devices: 6, seed: 2)
            try publishInput(updates, js: js, layout: layout)
            let duration = Duration.seconds(2)   // long enough that worker-a keeps it while it works, under load too
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: duration))
            guard let leaseA = try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-a", duration: duration) else {
                throw Failed("not acquired")
            }
            let a = try PartitionWorker(jetStream: js, layout: layout, lease: leaseA, engine: DetectionEngine(fences: Drive.fences))
            // worker-a processes about half, then hangs (a kill -9 would look the same to the others).
            while a.inputSequence < UInt64(updates.count / 2) {
                if try a.step(maxMessages: 50) == .leaseLost { throw Failed("worker-a lost its lease while working") }
            }
            let storedByA = a.statistics.eventsStored
            try check(storedByA > 0, "worker-a published events")

            // worker-b takes the partition once the lease expired and replays the input from the start
            // (no snapshot yet): the events worker-a stored come again with the same ids.
            var leaseB: PartitionLease?
            let deadline = Date().addingTimeInterval(10)
            while leaseB == nil && Date() < deadline {
                leaseB = try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-b", duration: duration)
                if leaseB == nil { usleep(100_000) }
            }
            guard let leaseB else { throw Failed("worker-b never got the partition") }
            let b = try PartitionWorker(jetStream: js, layout: layout, lease: leaseB, engine: DetectionEngine(fences: Drive.fences))
            try check(try drain(b) == .idle, "worker-b drained")
            try check(b.statistics.duplicateEvents == storedByA, "worker-b's replay of worker-a's events were all duplicates: \(b.statistics)")

            // worker-a wakes up: it stops before processing anything.
            try check(try a.step() == .leaseLost && a.stopped, "the stale worker stops")

            let expected = Drive.singleProcessEvents(updates)
            let stored = try storedEvents(js: js, layout: layout)
            try check(stored.count == expected.count && Set(stored.map(\.id)) == Set(expected.map(\.id)), "0 lost, 0 doubled: \(stored.count) stored, \(expected.count) expected")
            try check(perDevice(stored) == perDevice(expected), "per-device order")
            try js.deleteKeyValue(leases.name)
        }
    }

    @Test func aStaleWorkerWithDivergentEventsIsFencedByTheEventSequence() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let updates = Drive.updates(devices: 4, seed: 3)
            let half = updates.count / 2
            try publishInput(Array(updates[..<half]), js: js, layout: layout)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            // worker-a has a fence the others do not (a stale fence set): near the end of the route, so
            // its events come in the second half, away from the other fences'.
            let ghost = Fence(id: "ghost", region: Region(.circle(center: Coordinate(latitude: 0, longitude: 0.0145), radius: 80)))
            let leaseA = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-a", duration: .seconds(30)))
            let a = try PartitionWorker(jetStream: js, layout: layout, lease: leaseA, engine: DetectionEngine(fences: Drive.fences + [ghost]))
            try drain(a)
            // An operator (or a bug) frees the key while worker-a still believes in its lease; worker-b
            // takes over, replays, and stores the second half's events.
            try leases.delete(PartitionLease.key(0))
            let leaseB = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-b", duration: .seconds(30)))
            let b = try PartitionWorker(jetStream: js, layout: layout, lease: leaseB, engine: DetectionEngine(fences: Drive.fences))
            try publishInput(Array(updates[half...]), js: js, layout: layout)
            try check(try drain(b) == .idle, "worker-b drained")
            try check(b.statistics.eventsStored > 0, "worker-b stored new events")
            // worker-a, still valid by its own clock, goes on one update per batch: batches whose events
            // worker-b stored are duplicates (harmless), and the first batch with an event of its own —
            // the ghost fence's — is refused by the expected sequence; its renewal fails; it stops.
            try check(leaseA.isValid, "worker-a still believes in its lease")
            try check(try drain(a, maxMessages: 1) == .leaseLost, "worker-a stops")
            try check(a.statistics.republished == 1 && a.statistics.duplicateEvents > 0, "refused once, after duplicates: \(a.statistics)")
            let stored = try storedEvents(js: js, layout: layout)
            try check(!stored.contains { $0.fence == "ghost" }, "no event of the stale worker's own was stored")
            let expected = Drive.singleProcessEvents(updates)
            try check(Set(stored.map(\.id)) == Set(expected.map(\.id)) && stored.count == expected.count, "exactly the expected events")
            try js.deleteKeyValue(leases.name)
        }
    }
}

@Suite("Partition clocks on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct PartitionTickTests {
    @Test func aTickFiresADwellAndAReplayFiresTheSameOne() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let start = Date(timeIntervalSince1970: 1_780_000_000)
            // A device enters the depot (dwell time 30 s) and falls silent.
            try publishInput([LocationUpdate(device: "van-1", time: start, latitude: 0, longitude: 0.005),
                              LocationUpdate(device: "van-1", time: start.addingTimeInterval(5), latitude: 0, longitude: 0)],
                             js: js, layout: layout)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            let lease = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-a", duration: .seconds(30)))
            let a = try PartitionWorker(jetStream: js, layout: layout, lease: lease, engine: DetectionEngine(fences: Drive.fences))
            try drain(a)
            try check(try storedEvents(js: js, layout: layout).map(\.kind) == [.entry], "the entry only, no dwell yet")
            // The owner's clock ticks: the dwell fires when the tick is read back, dated when it fell due.
            try check(try a.tick(to: start.addingTimeInterval(20)), "tick")
            try check(try a.tick(to: start.addingTimeInterval(60)), "tick")
            try drain(a)
            let events = try storedEvents(js: js, layout: layout)
            try check(events.map(\.kind) == [.entry, .dwell], "entry then dwell: \(events.map(\.kind))")
            try check(events.last?.time == start.addingTimeInterval(35), "the dwell is dated when it fell due")
            try check(a.statistics.ticks == 2, "\(a.statistics)")

            // A new owner replays the input, ticks included: the same events, all duplicates.
            try a.lease.release()
            let leaseB = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-b", duration: .seconds(30)))
            let b = try PartitionWorker(jetStream: js, layout: layout, lease: leaseB, engine: DetectionEngine(fences: Drive.fences))
            try drain(b)
            try check(b.statistics.duplicateEvents == 2 && b.statistics.eventsStored == 0, "the replay fired the same dwell: \(b.statistics)")
            // The old owner's clock stops with its lease; the new owner's goes on from the last tick.
            try check(try a.tick(to: start.addingTimeInterval(90)) == false && a.stopped, "a released owner cannot tick")
            try check(try b.tick(to: start.addingTimeInterval(120)), "the new owner ticks")
            try js.deleteKeyValue(leases.name)
        }
    }
}

/// Idle ticks left out (``PartitionWorker/tickUnlessIdle(to:holding:)``): a tick that would change
/// nothing is not written, one that would is, and the events are those of a clock that ticks always.
@Suite("Idle ticks left out, on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct IdleTickTests {
    static func tickMessages(_ js: JetStream, _ layout: ClusterLayout) throws -> UInt64 {
        try js.subjects(of: layout.inputStream, matching: layout.tickSubject(0))[layout.tickSubject(0)] ?? 0
    }

    @Test func onlyTicksThatChangeSomethingAreWrittenAndTheDwellIsTheSame() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let start = Date(timeIntervalSince1970: 1_780_000_000)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            let lease = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-a", duration: .seconds(30)))
            let a = try PartitionWorker(jetStream: js, layout: layout, lease: lease, engine: DetectionEngine(fences: Drive.fences))
            // Nothing known, nothing due: no tick.
            try check(try a.tickUnlessIdle(to: start), "left out, not refused")
            try check(try Self.tickMessages(js, layout) == 0, "an empty partition writes no tick")
            // A device enters the depot (dwell time 30 s, due at +35) and falls silent.
            try publishInput([LocationUpdate(device: "van-1", time: start, latitude: 0, longitude: 0.005),
                              LocationUpdate(device: "van-1", time: start.addingTimeInterval(5), latitude: 0, longitude: 0)],
                             js: js, layout: layout)
            try drain(a)
            try a.tickUnlessIdle(to: start.addingTimeInterval(20))
            try check(try Self.tickMessages(js, layout) == 0, "the dwell is not due by +20: no tick")
            try a.tickUnlessIdle(to: start.addingTimeInterval(60), holding: ["van-1"])
            try check(try Self.tickMessages(js, layout) == 0, "due, but its device is held: no tick")
            try a.tickUnlessIdle(to: start.addingTimeInterval(60))
            try check(try Self.tickMessages(js, layout) == 1, "due and not held: the tick is written")
            try drain(a)
            let events = try storedEvents(js: js, layout: layout)
            try check(events.map(\.kind) == [.entry, .dwell], "entry then dwell: \(events.map(\.kind))")
            try check(events.last?.time == start.addingTimeInterval(35), "the dwell is dated when it fell due, as with every tick written")
            // Fired: nothing is due any more.
            for k in 0..<5 { try a.tickUnlessIdle(to: start.addingTimeInterval(70 + Double(k))) }
            try check(try Self.tickMessages(js, layout) == 1, "quiet again: no tick")
            try check(a.statistics.ticks == 1 && a.statistics.idleTicksLeftOut == 8, "\(a.statistics)")
            try js.deleteKeyValue(leases.name)
        }
    }

    /// A quiet `ClusterWorker` over 8 partitions: with idle ticks left out it writes none, where a clock
    /// that ticks always writes 4 a second per partition. A dwell that falls due is fired by a tick (the
    /// event dated when it fell due), and then the worker is quiet again: reading its own tick back does
    /// not make it tick on.
    @Test func aQuietWorkerWritesNoTicks() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            var counts: [Bool: UInt64] = [:]
            for leavingOut in [true, false] {
                let layout = ClusterLayout(prefix: "q\(UUID().uuidString.prefix(8).lowercased())", partitioning: DevicePartitioning(count: 8)!)
                let resources = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(10))
                let worker = ClusterWorker(jetStream: js, layout: layout, leases: resources.leases, snapshots: resources.snapshots,
                                           configuration: ClusterWorker.Configuration(id: "quiet", leaseDuration: .seconds(10),
                                                                                      allowedLateness: .seconds(1), fences: Drive.fences,
                                                                                      leavesOutIdleTicks: leavingOut))
                worker.start()
                defer { worker.stop(releasing: true) }
                let ticks = { () throws -> UInt64 in
                    try js.subjects(of: layout.inputStream, matching: "\(layout.prefix).in.*.=tick").values.reduce(0, +)
                }
                let deadline = ContinuousClock.now + .seconds(20)
                while worker.ownedPartitions.count < 8, ContinuousClock.now < deadline { usleep(50_000) }
                try check(worker.ownedPartitions.count == 8, "the worker owns every partition")
                let before = try ticks()
                usleep(2_000_000)
                counts[leavingOut] = try ticks() - before
                guard leavingOut else { break }

                // A van enters the depot (dwell 30 s) 40 s ago and falls silent: its dwell is due.
                // Whole seconds, so that the times survive the records' seconds-since-1970 exactly.
                let start = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 40).rounded())
                try publishInput([LocationUpdate(device: "van-1", time: start, latitude: 0, longitude: 0.005),
                                  LocationUpdate(device: "van-1", time: start.addingTimeInterval(1), latitude: 0, longitude: 0)],
                                 js: js, layout: layout)
                var events: [GeofenceEvent] = []
                let fired = ContinuousClock.now + .seconds(15)
                while events.count < 2, ContinuousClock.now < fired {
                    usleep(100_000)
                    events = try storedEvents(js: js, layout: layout)
                }
                try check(events.map(\.kind) == [.entry, .dwell], "the clock fired the dwell: \(events.map(\.kind))")
                try check(events.last?.time == start.addingTimeInterval(31), "dated when it fell due")
                usleep(500_000)
                let afterDwell = try ticks()
                usleep(2_000_000)
                let later = try ticks()
                try check(later == afterDwell, "quiet again after the dwell: \(later - afterDwell) ticks")
            }
            print("ticks written by a quiet worker over 8 partitions in 2 s: \(counts[true]!) leaving idle ones out,",
                  "\(counts[false]!) ticking always")
            try check(counts[true] == 0, "no tick while quiet: \(counts)")
            try check(counts[false]! >= 16, "a clock that ticks always writes several a second per partition: \(counts)")
        }
    }

    /// A fence change is applied at a tick, so a partition with nothing due still writes the tick that
    /// carries it — once.
    @Test func aFenceChangeIsTickedOnce() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let fenceBucket = try js.createKeyValue(KeyValueConfiguration(bucket: "fences_\(UUID().uuidString.prefix(8).lowercased())"))
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            let lease = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-a", duration: .seconds(30)))
            let feed = try FenceFeed(bucket: fenceBucket)
            let a = try PartitionWorker(jetStream: js, layout: layout, lease: lease, engine: DetectionEngine(), fences: feed)
            let now = Date()
            try a.tickUnlessIdle(to: now)
            try check(try IdleTickTests.tickMessages(js, layout) == 0, "no fence, nothing due: no tick")
            try fenceBucket.put(FenceFeed.key(of: "depot"), FenceFeedTests.square("depot", longitude: 0, half: 0.0025))
            try feed.poll(wait: .seconds(2))
            try check(feed.receivedRevision == 1, "the feed has the fence: \(feed.receivedRevision)")
            try a.tickUnlessIdle(to: now)
            try a.tickUnlessIdle(to: now)
            try check(try IdleTickTests.tickMessages(js, layout) == 1, "the change is ticked, once")
            try drain(a)
            try check(a.fenceRevision == 1 && a.engine.fence(id: "depot") != nil, "applied at the tick: \(a.fenceRevision)")
            try a.tickUnlessIdle(to: now)
            try check(try IdleTickTests.tickMessages(js, layout) == 1, "applied: no tick")
            feed.close()
            try js.deleteKeyValue(leases.name)
            try js.deleteKeyValue(fenceBucket.name)
        }
    }
}

@Suite("Fences from the bucket, applied at ticks", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct FenceFeedTests {
    static func square(_ id: String, longitude: Double, half: Double) -> [UInt8] {
        let ring = [[longitude - half, -half], [longitude + half, -half], [longitude + half, half], [longitude - half, half], [longitude - half, -half]]
        let coordinates = ring.map { "[\($0[0]),\($0[1])]" }.joined(separator: ",")
        return Array(#"{"type":"Feature","id":"\#(id)","geometry":{"type":"Polygon","coordinates":[[\#(coordinates)]]},"properties":{}}"#.utf8)
    }

    @Test func fenceChangesTakeEffectAtTheTickThatRecordsThemAndReplayTheSame() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let fenceBucket = try js.createKeyValue(KeyValueConfiguration(bucket: "fences_\(UUID().uuidString.prefix(8).lowercased())", history: 10))
            let depot = FenceFeedTests.square("depot", longitude: 0, half: 0.0025)
            let yard = FenceFeedTests.square("yard é", longitude: 0.01, half: 0.002)   // an id that needs encoding
            try fenceBucket.put(FenceFeed.key(of: "depot"), depot)
            try fenceBucket.put(FenceFeed.key(of: "yard é"), yard)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            let leaseA = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-a", duration: .seconds(30)))
            let feedA = try FenceFeed(bucket: fenceBucket)
            let a = try PartitionWorker(jetStream: js, layout: layout, lease: leaseA, engine: DetectionEngine(), fences: feedA)
            let updates = Drive.updates(devices: 6, seed: 4)
            let half = updates.count * 4 / 5   // late enough that devices reached the yard
            let before = updates[0].time.addingTimeInterval(-1)
            // Input: a tick with both fences, most updates, a tick after the yard was removed, the rest.
            try feedA.poll(wait: .seconds(2))
            try check(feedA.receivedRevision == 2, "the feed has both fences: \(feedA.receivedRevision)")
            try check(try a.tick(to: before), "tick")
            try publishInput(Array(updates[..<half]), js: js, layout: layout)
            try fenceBucket.delete(FenceFeed.key(of: "yard é"))
            try feedA.poll(wait: .seconds(2))
            try check(feedA.receivedRevision == 3, "the feed has the removal: \(feedA.receivedRevision)")
            try check(try a.tick(to: before), "tick")
            try publishInput(Array(updates[half...]), js: js, layout: layout)
            try check(try drain(a) == .idle, "drained")
            try check(a.statistics.ticks == 2 && a.statistics.malformed == 0, "\(a.statistics)")

            // One process with the same fences and the same change at the same point.
            let loaded = FenceLoader().load(GeoJSONReader().read(Array(#"{"type":"FeatureCollection","features":["#.utf8) + depot + Array(",".utf8) + yard + Array("]}".utf8)))
            var engine = DetectionEngine(fences: loaded.fences)
            var expected: [GeofenceEvent] = []
            for update in updates[..<half] { _ = engine.process(update, into: &expected) }
            _ = engine.remove(id: "yard é")
            for update in updates[half...] { _ = engine.process(update, into: &expected) }
            try check(loaded.fences.count == 2, "both features load: \(loaded.problems)")
            try check(Set(expected.map(\.fence)) == ["depot", "yard é"], "both fences fired: \(Set(expected.map(\.fence)))")
            // Without the removal the yard would report exits after the cut: the change point matters.
            var unchanged = DetectionEngine(fences: loaded.fences)
            var withoutRemoval: [GeofenceEvent] = []
            for update in updates { _ = unchanged.process(update, into: &withoutRemoval) }
            try check(withoutRemoval.contains { $0.fence == "yard é" && $0.time >= updates[half].time }, "yard events after the cut")
            try check(!expected.contains { $0.fence == "yard é" && $0.time >= updates[half].time }, "none once removed")

            let stored = try storedEvents(js: js, layout: layout)
            try check(Set(stored) == Set(expected) && stored.count == expected.count, "the fence change took effect at its tick")
            try check(perDevice(stored) == perDevice(expected), "per-device order")

            // A new owner replays from the start with an empty engine: the same fence history, the same events.
            try leaseA.release()
            let leaseB = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-b", duration: .seconds(30)))
            let b = try PartitionWorker(jetStream: js, layout: layout, lease: leaseB, engine: DetectionEngine(),
                                        fences: FenceFeed(bucket: fenceBucket))
            try check(try drain(b) == .idle, "drained")
            try check(b.statistics.eventsStored == 0 && b.statistics.duplicateEvents == expected.count, "a replay stores nothing new: \(b.statistics)")
            try js.deleteKeyValue(leases.name)
            try js.deleteKeyValue(fenceBucket.name)
        }
    }
}

@Suite("Partition snapshots")
struct PartitionSnapshotTests {
    @Test func aSnapshotRoundTripsEveryField() throws {
        var engine = DetectionEngine(fences: Drive.fences)
        for update in Drive.updates(devices: 5, seed: 5).prefix(150) { _ = engine.process(update) }
        let fix = DetectionEngine.FixSnapshot(time: 1.5, coordinate: Coordinate(latitude: 0.1, longitude: -0.2), accuracy: nil)
        var devices = engine.deviceSnapshots
        devices.append(DetectionEngine.DeviceSnapshot(
            device: "with options . *", lastTime: 12.25, lastCoordinate: Coordinate(latitude: 1, longitude: 2), updateCount: 7,
            memberships: [.init(fence: "depot", entryTime: 3, visitSequence: 4, ordinal: nil, hasDwelled: true)],
            instantVisits: [.init(fence: "yard", entryTime: 5, ordinal: 2)],
            options: .init(pending: [.init(fence: "yard", toInside: true, since: 6, observedAt: 6.5,
                                           coordinate: Coordinate(latitude: 0.3, longitude: 0.4), sequence: 9)],
                           dwellRepeats: [.init(fence: "depot", visitSequence: 4, count: 3)], anchor: fix, lastSequence: -1),
            stream: .init(buffered: [.init(fix: fix, arrival: 11)], newest: -.infinity, recent: [fix])))
        let snapshot = PartitionSnapshot(partition: 7, inputSequence: 150, fenceRevision: 3, devices: devices,
                                         engineState: engine.engineState)
        #expect(devices.contains { !$0.memberships.isEmpty }, "someone is inside")
        let decoded = try PartitionSnapshot(decoding: snapshot.encoded())
        #expect(decoded == snapshot)
        #expect(throws: SnapshotError.self) { try PartitionSnapshot(decoding: Array("{}".utf8)) }
    }
}

@Suite("Snapshots on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct SnapshotResumeTests {
    @Test func aNewOwnerResumesFromTheSnapshotAndReplaysOnlyWhatFollows() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 1, js: js)
            let updates = Drive.updates(devices: 6, seed: 6)
            try publishInput(updates, js: js, layout: layout)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            let store = SnapshotStore(bucket: try js.createKeyValue(SnapshotStore.bucketConfiguration(name: "snap_\(UUID().uuidString.prefix(8).lowercased())")))
            let leaseA = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-a", duration: .seconds(30)))
            let a = try PartitionWorker.resume(jetStream: js, layout: layout, lease: leaseA, snapshots: store, fences: Drive.fences)
            // worker-a: a third, a snapshot, another third (published, not in the snapshot), then it is gone.
            while a.inputSequence < UInt64(updates.count / 3) {
                if try a.step(maxMessages: 40) == .leaseLost { throw Failed("worker-a lost its lease while working") }
            }
            try check(try a.saveSnapshot(to: store), "snapshot saved")
            let covered = a.inputSequence
            try check(try a.saveSnapshot(to: store), "a second snapshot replaces the first (compare-and-set on its own)")
            while a.inputSequence < UInt64(2 * updates.count / 3) {
                if try a.step(maxMessages: 40) == .leaseLost { throw Failed("worker-a lost its lease while working") }
            }
            let storedAfterSnapshot = a.statistics.eventsStored
            try a.lease.release()

            let leaseB = try #require(try PartitionLease.acquire(in: leases, partition: 0, owner: "worker-b", duration: .seconds(30)))
            let b = try PartitionWorker.resume(jetStream: js, layout: layout, lease: leaseB, snapshots: store, fences: Drive.fences)
            try check(b.inputSequence == covered, "resumes after the snapshot's sequence")
            try check(try drain(b) == .idle, "drained")
            try check(b.statistics.updates == updates.count - Int(covered), "replayed only what follows the snapshot: \(b.statistics)")
            try check(b.statistics.duplicateEvents > 0 && storedAfterSnapshot > 0, "events worker-a stored after the snapshot came back as duplicates")
            // Nothing re-fires for devices already inside at the snapshot, and nothing is lost.
            let expected = Drive.singleProcessEvents(updates)
            let stored = try storedEvents(js: js, layout: layout)
            try check(stored.count == expected.count && Set(stored) == Set(expected), "exactly the single-process events")
            try check(perDevice(stored) == perDevice(expected), "per-device order")
            // The old owner cannot overwrite the new owner's snapshot.
            try check(try b.saveSnapshot(to: store), "the new owner saves")
            try check(try a.saveSnapshot(to: store) == false, "the released owner does not")
            try js.deleteKeyValue(leases.name)
            try js.deleteKeyValue(store.bucket.name)
        }
    }
}

@Suite("Cluster workers on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct ClusterWorkerTests {
    @Test func aCrashedWorkersPartitionsAreTakenOverWithNothingLostOrDoubled() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let layout = try freshLayout(partitions: 4, js: js)
            let updates = Drive.updates(devices: 12, seed: 7)
            try publishInput(updates, js: js, layout: layout)
            let leases = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(2)))
            let store = SnapshotStore(bucket: try js.createKeyValue(SnapshotStore.bucketConfiguration(name: "snap_\(UUID().uuidString.prefix(8).lowercased())")))
            // The clock stands before the drive: ticks fire nothing, so one process without ticks is the reference.
            let before = updates[0].time.addingTimeInterval(-1000)
            func configuration(_ id: String) -> ClusterWorker.Configuration {
                ClusterWorker.Configuration(id: id, leaseDuration: .seconds(2), maxPartitions: 4, batchSize: 50,
                                            tickInterval: .milliseconds(100), allowedLateness: .seconds(1), snapshotEvery: 100,
                                            fences: Drive.fences)
            }
            let first = ClusterWorker(jetStream: js, layout: layout, leases: leases, snapshots: store, configuration: configuration("worker-1"),
                                      clock: { before })
            let second = ClusterWorker(jetStream: js, layout: layout, leases: leases, snapshots: store, configuration: configuration("worker-2"),
                                       clock: { before })
            defer {
                first.stop(releasing: false)
                second.stop(releasing: true)
            }
            first.start()
            let halfway = waitUntil(seconds: 30) {
                first.statistics.values.reduce(0) { $0 + $1.updates } >= updates.count / 2 && first.ownedPartitions.count == 4
            }
            try check(halfway, "worker-1 took the partitions and worked through half the input")
            second.start()
            try check(second.ownedPartitions.isEmpty, "every partition is held")
            // worker-1 dies (no release, no last snapshot): worker-2 takes each partition once its lease expired.
            first.stop(releasing: false)
            let expected = Drive.singleProcessEvents(updates)
            let caughtUp = waitUntil(seconds: 40) {
                second.ownedPartitions.count == 4 && ((try? js.streamState(layout.eventStream).messages) ?? 0) >= UInt64(expected.count)
                    && second.statistics.values.reduce(0) { $0 + $1.updates } > 0
            }
            try check(caughtUp, "worker-2 took over: owns \(second.ownedPartitions)")
            usleep(500_000)   // anything doubled would show up now
            second.stop(releasing: true)
            let stored = try storedEvents(js: js, layout: layout)
            try check(stored.count == expected.count && Set(stored) == Set(expected), "0 lost, 0 doubled: \(stored.count) of \(expected.count)")
            try check(perDevice(stored) == perDevice(expected), "per-device order")
            try check(try store.latest(0) != nil, "snapshots were taken")
            try js.deleteKeyValue(leases.name)
            try js.deleteKeyValue(store.bucket.name)
        }
    }
}
