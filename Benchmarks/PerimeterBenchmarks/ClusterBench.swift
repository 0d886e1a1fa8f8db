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
/// Twice: on one `nats-server` on loopback (R1), then on three in one JetStream cluster on loopback
/// with every stream and bucket R3 (each write stored by two of three servers before it is
/// acknowledged). On a 2-core machine the servers, the publisher and the workers share the cores, so
/// the figures are rough — a floor for a worker on a machine of its own, not a capacity; the CPU
/// seconds per 1,000 updates (this process: publisher and workers; the servers, from /proc) say what
/// each update costs where wall time is noise. Two workers run in this one process, each holding half
/// of the partitions (a worker takes free partitions up to its maximum; balancing is the worker
/// command's).
public struct ClusterBench: Sendable {
    /// Section names (`label`: `R1`, or `R3, three servers`).
    public enum Section {
        public static func throughput(_ label: String) -> String {
            "Cluster: updates/s through JetStream and in-process workers (\(label), wall clock)"
        }
        public static func cpu(_ label: String) -> String { "Cluster: CPU seconds per 1,000 updates (\(label))" }
        public static func latency(_ label: String) -> String { "Cluster: update published → event stored (\(label))" }
        public static func failover(_ label: String) -> String { "Cluster: failover after a worker crash (\(label))" }
        public static let throughput = throughput("R1")
        public static let latency = latency("R1")
        public static let failover = failover("R1")
    }

    /// Updates per throughput run on one server (R1).
    public var updates: Int
    /// Updates per throughput run on three servers (R3).
    public var replicatedUpdates: Int
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
        replicatedUpdates = smoke ? 5_000 : 50_000
        devices = smoke ? 200 : 2_000
        batchSizes = smoke ? [1000] : [100, 1000, 5000]
        latencySamples = smoke ? 50 : 400
    }

    /// Runs the measurements on one server (R1), then on three (R3); skipped, with a note, when
    /// nats-server is absent.
    public func run(into report: inout Report) {
        guard NATSServer.binary != nil else {
            report.note("cluster: nats-server is not installed (make deps); the cluster part was skipped")
            return
        }
        let fences = Self.fences()
        do {
            let server = try NATSServer.start(name: "bench")
            defer { server.stop() }
            let js = try JetStream(try NATSConnection(urls: [server.url], name: "perimeter-bench"))
            try measure(js: js, replicas: 1, label: "R1", fences: fences, input: Self.updates(count: updates, devices: devices), into: &report)
            report.note("cluster: one nats-server (R1) and the workers in this process on a shared machine: the figures are rough, a floor for a worker with a machine of its own")
        } catch {
            report.note("cluster (R1): failed: \(error)")
        }
        do {
            let cluster = try NATSCluster.start(size: 3, name: "bench")
            defer { cluster.stop() }
            let js = try JetStream(try NATSConnection(urls: cluster.urls, name: "perimeter-bench-r3"))
            try measure(js: js, replicas: 3, label: "R3, three servers", fences: fences,
                        input: Self.updates(count: replicatedUpdates, devices: devices), into: &report)
            report.note("cluster: three nats-servers on loopback (R3: every write stored by two of three before it is acknowledged) on the same shared machine; each server's CPU is counted in the servers' figure")
        } catch {
            report.note("cluster (R3): failed: \(error)")
        }
    }

    /// Throughput (with CPU per update), latency and failover on `js`'s servers.
    func measure(js: JetStream, replicas: Int, label: String, fences: [Fence], input: [LocationUpdate], into report: inout Report) throws {
        for workers in [1, 2] {
            for batch in batchSizes {
                let run = try throughput(js: js, replicas: replicas, fences: fences, input: input, workers: workers, batchSize: batch)
                let subject = "\(workers) worker\(workers == 1 ? "" : "s"), step batch \(batch)"
                report.add(Section.throughput(label), subject, run.rate, "updates/s",
                           note: "\(input.count) updates, \(devices) devices, \(partitions) partitions")
                report.add(Section.cpu(label), subject + ": this process (publisher, workers)", run.processCPU * 1000 / Double(input.count),
                           "s", higherIsBetter: false, note: "CPU seconds per 1,000 updates")
                report.add(Section.cpu(label), subject + ": nats-server\(replicas == 1 ? "" : "s")", run.serverCPU * 1000 / Double(input.count),
                           "s", higherIsBetter: false, note: "CPU seconds per 1,000 updates, every server")
            }
        }
        let (p50, p99, count) = try latency(js: js, replicas: replicas, fences: fences)
        report.add(Section.latency(label), "p50", p50 * 1000, "ms", higherIsBetter: false, note: "\(count) updates, one at a time, each makes one event")
        report.add(Section.latency(label), "p99", p99 * 1000, "ms", higherIsBetter: false, note: "\(count) updates")
        let failover = try failover(js: js, replicas: replicas, fences: fences)
        report.add(Section.failover(label), "crash → all \(partitions) partitions owned again", failover, "s", higherIsBetter: false,
                   note: "lease \(failoverLease); at most the lease time plus a round (the lease runs from its last renewal)")
    }

    /// CPU seconds used so far by this process's `nats-server` children (from /proc; 0 where unreadable).
    static func serverCPUSeconds() -> Double {
        let me = getpid()
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int32(entry) != nil {
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.range(of: ")", options: .backwards),
                  stat[stat.startIndex..<close.lowerBound].hasSuffix("(nats-server") else { continue }
            // After "pid (comm) ": state, ppid, … utime is field 14 and stime 15 of the whole line.
            let fields = stat[close.upperBound...].split(separator: " ")
            guard fields.count > 12, Int32(fields[1]) == me, let user = Double(fields[11]), let system = Double(fields[12]) else { continue }
            total += (user + system) / ticks
        }
        return total
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

    func cluster(js: JetStream, replicas: Int, lease: Duration = .seconds(10)) throws -> Cluster {
        let layout = ClusterLayout(prefix: "b\(UUID().uuidString.prefix(8).lowercased())",
                                   partitioning: DevicePartitioning(count: partitions)!)
        // A cluster that has just started elects its JetStream leader first.
        let deadline = Date().addingTimeInterval(60)
        while true {
            do {
                return Cluster(layout: layout, resources: try ClusterResources.open(on: js, layout: layout, replicas: replicas, leaseDuration: lease))
            } catch {
                if Date() > deadline { throw error }
                usleep(250_000)
            }
        }
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
    func throughput(js: JetStream, replicas: Int, fences: [Fence], input: [LocationUpdate], workers count: Int,
                    batchSize: Int) throws -> (rate: Double, processCPU: Double, serverCPU: Double) {
        let c = try cluster(js: js, replicas: replicas)
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
        let (cpu0, server0) = (Measure.cpuSeconds(), Self.serverCPUSeconds())
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
        return (Double(input.count) / (Measure.wallSeconds() - t0), Measure.cpuSeconds() - cpu0, Self.serverCPUSeconds() - server0)
    }

    /// One worker; one device crossing a fence's edge on every update, one update at a time every
    /// 20 ms; the latency of each is from just before its publish to its event read from the stream.
    func latency(js: JetStream, replicas: Int, fences: [Fence]) throws -> (Double, Double, Int) {
        let c = try cluster(js: js, replicas: replicas)
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
    func failover(js: JetStream, replicas: Int, fences: [Fence]) throws -> Double {
        let c = try cluster(js: js, replicas: replicas, lease: failoverLease)
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

