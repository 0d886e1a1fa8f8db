import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterNATS
import PerimeterTestSupport

/// The cluster (docs/cluster.md, "Operating it"): updates/s through NATS JetStream and in-process
/// ``ClusterWorker``s (1 and 2 workers, several step batch sizes), end-to-end latency (an update
/// published → its event stored on the events stream, p50/p99), and failover time (a worker stopped as
/// by a crash → every partition owned again).
///
/// One `nats-server` on loopback (R1): on a 2-core machine the server, the publisher and the workers
/// share the cores, so the figures are rough — a floor for a worker on a machine of its own, not a
/// capacity. Two workers run in this one process, each holding half of the partitions (a worker takes
/// free partitions up to its maximum; balancing is the worker command's).
public struct ClusterBench: Sendable {
    /// Section names.
    public enum Section {
        public static let throughput = "Cluster: updates/s through JetStream and in-process workers (R1, wall clock)"
        public static let latency = "Cluster: update published → event stored (R1)"
        public static let failover = "Cluster: failover after a worker crash (R1)"
    }

    /// Updates per throughput run.
    public var updates: Int
    /// Devices in the throughput runs.
    public var devices: Int
    /// Partitions of the cluster.
    public var partitions = 8
    /// Step batch sizes measured (input records one partition step applies at most).
    public var batchSizes: [Int]
    /// Latency samples.
    public var latencySamples: Int
    /// Lease time of the failover run.
    public var failoverLease: Duration = .seconds(3)

    /// Creates the benchmark; `smoke` makes it small.
    public init(smoke: Bool) {
        updates = smoke ? 5_000 : 100_000
        devices = smoke ? 200 : 2_000
        batchSizes = smoke ? [1000] : [100, 1000, 5000]
        latencySamples = smoke ? 50 : 400
    }

    /// Runs the three measurements (skipped, with a note, when nats-server is absent).
    public func run(into report: inout Report) {
        guard NATSServer.binary != nil else {
            report.note("cluster: nats-server is not installed (make deps); the cluster part was skipped")
            return
        }
        do {
            let server = try NATSServer.start(name: "bench")
            defer { server.stop() }
            let js = try JetStream(try NATSConnection(urls: [server.url], name: "perimeter-bench"))
            let fences = Self.fences()
            let input = Self.updates(count: updates, devices: devices)
            for workers in [1, 2] {
                for batch in batchSizes {
                    let rate = try throughput(js: js, fences: fences, input: input, workers: workers, batchSize: batch)
                    report.add(Section.throughput, "\(workers) worker\(workers == 1 ? "" : "s"), step batch \(batch)", rate, "updates/s",
                               note: "\(input.count) updates, \(devices) devices, \(partitions) partitions")
                }
            }
            let (p50, p99, count) = try latency(js: js, fences: fences)
            report.add(Section.latency, "p50", p50 * 1000, "ms", higherIsBetter: false, note: "\(count) updates, one at a time, each makes one event")
            report.add(Section.latency, "p99", p99 * 1000, "ms", higherIsBetter: false, note: "\(count) updates")
            let failover = try failover(js: js, fences: fences)
            report.add(Section.failover, "crash → all \(partitions) partitions owned again", failover, "s", higherIsBetter: false,
                       note: "lease \(failoverLease); at most the lease time plus a round (the lease runs from its last renewal)")
            report.note("cluster: one nats-server (R1) and the workers in this process on a shared machine: the figures are rough, a floor for a worker with a machine of its own")
        } catch {
            report.note("cluster: failed: \(error)")
        }
    }

    // MARK: Workload

    /// 10 × 10 squares of about 1 km, 2 km apart.
    static func fences() -> [Fence] {
        var features: [String] = []
        for i in 0..<10 {
            for j in 0..<10 {
                let lat = 45.0 + Double(i) * 0.02, lon = 7.0 + Double(j) * 0.028
                let ring = "[[\(lon),\(lat)],[\(lon + 0.013),\(lat)],[\(lon + 0.013),\(lat + 0.009)],[\(lon),\(lat + 0.009)],[\(lon),\(lat)]]"
                features.append(#"{"type":"Feature","id":"f\#(i)-\#(j)","properties":{},"geometry":{"type":"Polygon","coordinates":[\#(ring)]}}"#)
            }
        }
        let text = #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
        guard let object = GeoJSONReader().read(Array(text.utf8)).object else { return [] }
        return FenceLoader().load(object).fences
    }

    /// `count` updates of `devices` devices walking over the fences, one second apart per device, in
    /// time order, starting two hours ago (no timer falls due: the fences have no dwell time).
    static func updates(count: Int, devices: Int) -> [LocationUpdate] {
        var random = SplitMix64(seed: 19)
        var positions = (0..<devices).map { _ in (45.0 + random.uniform(0...1) * 0.2, 7.0 + random.uniform(0...1) * 0.28) }
        let start = Date().addingTimeInterval(-7200)
        var result: [LocationUpdate] = []
        result.reserveCapacity(count)
        for k in 0..<count {
            let d = k % devices
            positions[d].0 += (random.uniform(0...1) - 0.5) * 0.002
            positions[d].1 += (random.uniform(0...1) - 0.5) * 0.003
            result.append(LocationUpdate(device: DeviceID("d\(d)"), time: start.addingTimeInterval(Double(k / devices)),
                                         latitude: positions[d].0, longitude: positions[d].1))
        }
        return result
    }

    struct Cluster {
        var layout: ClusterLayout
        var resources: ClusterResources
    }

    func cluster(js: JetStream, lease: Duration = .seconds(10)) throws -> Cluster {
        let layout = ClusterLayout(prefix: "b\(UUID().uuidString.prefix(8).lowercased())",
                                   partitioning: DevicePartitioning(count: partitions)!)
        return Cluster(layout: layout, resources: try ClusterResources.open(on: js, layout: layout, leaseDuration: lease))
    }

    func worker(_ id: String, _ c: Cluster, js: JetStream, fences: [Fence], maxPartitions: Int, batchSize: Int = 1000) -> ClusterWorker {
        ClusterWorker(jetStream: js, layout: c.layout, leases: c.resources.leases, snapshots: c.resources.snapshots,
                      configuration: ClusterWorker.Configuration(id: id, leaseDuration: c.resources.leaseDuration,
                                                                 maxPartitions: maxPartitions, batchSize: batchSize, fences: fences))
    }

    static func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            usleep(2_000)
        }
        return true
    }

    // MARK: Measurements

    /// Workers first (every partition owned), then the input published in batches of 5,000 while they
    /// work; the rate is updates over the time from the first publish to the last update applied.
    func throughput(js: JetStream, fences: [Fence], input: [LocationUpdate], workers count: Int, batchSize: Int) throws -> Double {
        let c = try cluster(js: js)
        let workers = (0..<count).map { worker("w\($0)", c, js: js, fences: fences, maxPartitions: partitions / count, batchSize: batchSize) }
        defer {
            for w in workers { w.stop(releasing: false) }
            try? js.deleteStream(c.layout.inputStream)
            try? js.deleteStream(c.layout.eventStream)
        }
        for w in workers { w.start() }
        guard Self.waitUntil(30, { workers.map(\.ownedPartitions.count).reduce(0, +) == partitions }) else {
            throw BenchFailure("cluster: the workers did not take every partition within 30 s")
        }
        let applied = { workers.flatMap { $0.statistics.values }.reduce(0) { $0 + $1.updates + $1.rejected } }
        let t0 = Measure.wallSeconds()
        var k = 0
        while k < input.count {
            let chunk = input[k..<min(k + 5000, input.count)]
            let results = js.publishBatch(chunk.map { InputRecord.update($0).message(in: c.layout) })
            if let failure = results.first(where: { if case .failure = $0 { true } else { false } }) {
                throw BenchFailure("cluster: publishing failed: \(failure)")
            }
            k += chunk.count
        }
        guard Self.waitUntil(600, { applied() >= input.count }) else {
            throw BenchFailure("cluster: \(applied()) of \(input.count) updates applied after 600 s")
        }
        return Double(input.count) / (Measure.wallSeconds() - t0)
    }

    /// One worker; one device crossing a fence's edge on every update, one update at a time every
    /// 20 ms; the latency of each is from just before its publish to its event read from the stream.
    func latency(js: JetStream, fences: [Fence]) throws -> (Double, Double, Int) {
        let c = try cluster(js: js)
        let w = worker("latency", c, js: js, fences: fences, maxPartitions: partitions)
        defer {
            w.stop(releasing: false)
            try? js.deleteStream(c.layout.inputStream)
            try? js.deleteStream(c.layout.eventStream)
        }
        w.start()
        guard Self.waitUntil(30, { w.ownedPartitions.count == partitions }) else { throw BenchFailure("cluster: no worker") }
        let consumer = try js.pullConsumer(stream: c.layout.eventStream, filterSubject: "\(c.layout.prefix).events.*", startSequence: 1)
        defer { consumer.close() }
        let start = Date().addingTimeInterval(-3600)
        var sent: [Int: Double] = [:]
        var latencies: [Double] = []
        for i in 0..<latencySamples {
            // Alternately inside and outside fence f0-0 (45.0…45.009, 7.0…7.013): an entry, then an exit.
            let update = LocationUpdate(device: DeviceID("latency"), time: start.addingTimeInterval(Double(i)),
                                        latitude: 45.0045, longitude: i % 2 == 0 ? 7.006 : 6.99)
            sent[i] = Measure.wallSeconds()
            let message = InputRecord.update(update).message(in: c.layout)
            _ = try js.publish(message.subject, message.payload, options: message.options)
            let deadline = Measure.wallSeconds() + 10
            var got = false
            while !got && Measure.wallSeconds() < deadline {
                for message in try consumer.fetch(max: 100, timeout: .milliseconds(100)) {
                    guard let event = EventRecord.event(message) else { continue }
                    let index = Int(event.time.timeIntervalSince(start).rounded())
                    if let t = sent.removeValue(forKey: index) {
                        latencies.append(Measure.wallSeconds() - t)
                        if index == i { got = true }
                    }
                }
            }
            usleep(20_000)
        }
        latencies.sort()
        guard !latencies.isEmpty else { throw BenchFailure("cluster: no event came back") }
        func quantile(_ q: Double) -> Double { latencies[min(latencies.count - 1, Int(Double(latencies.count - 1) * q))] }
        return (quantile(0.5), quantile(0.99), latencies.count)
    }

    /// Worker A takes every partition, B waits with no partition free; A stops as by a crash (no
    /// release); the time until B owns every partition.
    func failover(js: JetStream, fences: [Fence]) throws -> Double {
        let c = try cluster(js: js, lease: failoverLease)
        let a = worker("a", c, js: js, fences: fences, maxPartitions: partitions)
        let b = worker("b", c, js: js, fences: fences, maxPartitions: partitions)
        defer {
            a.stop(releasing: false)
            b.stop(releasing: false)
            try? js.deleteStream(c.layout.inputStream)
            try? js.deleteStream(c.layout.eventStream)
        }
        a.start()
        guard Self.waitUntil(30, { a.ownedPartitions.count == partitions }) else { throw BenchFailure("cluster: A took no partitions") }
        b.start()
        usleep(500_000)
        let t0 = Measure.wallSeconds()
        a.stop(releasing: false)
        guard Self.waitUntil(120, { b.ownedPartitions.count == partitions }) else { throw BenchFailure("cluster: B did not take over within 120 s") }
        return Measure.wallSeconds() - t0
    }
}

