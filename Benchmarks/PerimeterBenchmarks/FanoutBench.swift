import Foundation
import PerimeterGeoJSON
import PerimeterServer
#if canImport(Glibc)
import Glibc
#endif

/// Server-Sent-Events fan-out: a `PerimeterServer` on the SQLite store, N clients on
/// `GET /v1/events/stream` over loopback sockets (``SSEClients``), and location posts that cause a known
/// number of events. Every client must receive every event exactly once and in sequence order, or the
/// run fails (no figure is reported then).
///
/// Two phases per client count: *throughput* (posts back to back; events delivered per second summed
/// over the clients, from the first post to the last arrival) and *latency* (one post at a time, each
/// waiting until all its events reached every client; the time from sending the post to the arrival at
/// the last client, median and p99). The yardstick is the same run with one client: each figure's note
/// gives its ratio to it (no figure is marked as the section's reference, because the report's
/// "advantage" column compares Perimeter with other tools, not a configuration with another).
public struct FanoutBench: Sendable {
    /// Section names.
    public static let section = "SSE fan-out (GET /v1/events/stream, SQLite store, loopback)"

    /// Stream clients of the measured run (the yardstick has one).
    public var clients: Int
    /// Posts in the throughput phase.
    public var throughputPosts: Int
    /// Posts in the latency phase.
    public var latencyPosts: Int
    /// Devices per post; each post makes every one of them enter or leave the fence: one event each.
    public var eventsPerPost: Int
    /// Where the database goes.
    public var workDirectory: URL

    /// The full run (1,000 clients) or the smoke run (50 clients, few posts).
    public init(smoke: Bool, workDirectory: URL) {
        clients = smoke ? 50 : 1_000
        throughputPosts = smoke ? 20 : 200
        latencyPosts = smoke ? 10 : 100
        eventsPerPost = 5
        self.workDirectory = workDirectory
    }

    /// What one run measured.
    struct Outcome {
        var deliveriesPerSecond: Double
        var latencies: [Double]
        var events: Int
    }

    /// Runs the yardstick (1 client) and the measured count; adds figures, or a failed check.
    public func run(into report: inout Report) {
        var outcomes: [Int: Outcome] = [:]
        for count in [1, clients] {
            log("fan-out: \(count) stream client(s), \(throughputPosts) + \(latencyPosts) posts of \(eventsPerPost) events")
            do {
                outcomes[count] = try measure(clients: count)
            } catch {
                report.check("SSE fan-out to \(count) clients: every event delivered once, in order", passed: false, "\(error)")
                return
            }
        }
        guard let one = outcomes[1], let many = outcomes[clients] else { return }
        report.check("SSE fan-out to \(clients) clients: every event delivered once, in order", passed: true,
                     "\(many.events) events × \(clients) clients")
        let oneMedian = Measure.median(one.latencies) * 1e3, manyMedian = Measure.median(many.latencies) * 1e3
        let oneP99 = Self.percentile(one.latencies, 0.99) * 1e3, manyP99 = Self.percentile(many.latencies, 0.99) * 1e3
        report.add(Self.section, "1 client (yardstick): events delivered", one.deliveriesPerSecond, "events/s",
                   note: "\(one.events) events; bounded by the posting rate")
        report.add(Self.section, "\(clients) clients: events delivered (sum over clients)", many.deliveriesPerSecond, "events/s",
                   note: String(format: "%.2f× the one-client rate; %d deliveries", many.deliveriesPerSecond / max(1e-9, one.deliveriesPerSecond),
                                many.events * clients))
        report.add(Self.section, "1 client (yardstick): latency, median", oneMedian, "ms (median)", higherIsBetter: false,
                   note: "post sent → event received; one post at a time")
        report.add(Self.section, "\(clients) clients: latency to the last client, median", manyMedian, "ms (median)",
                   higherIsBetter: false, note: String(format: "%.2f× the one-client latency", manyMedian / max(1e-9, oneMedian)))
        report.add(Self.section, "1 client (yardstick): latency, p99", oneP99, "ms (p99)", higherIsBetter: false,
                   note: "\(one.latencies.count) posts")
        report.add(Self.section, "\(clients) clients: latency to the last client, p99", manyP99, "ms (p99)",
                   higherIsBetter: false, note: String(format: "%.2f× the one-client p99", manyP99 / max(1e-9, oneP99)))
        report.context.append(("SSE fan-out", String(format: "%d clients: %.0f events/s delivered (%.2f× one client), latency median %.1f ms / p99 %.1f ms",
                                                       clients, many.deliveriesPerSecond,
                                                       many.deliveriesPerSecond / max(1e-9, one.deliveriesPerSecond), manyMedian, manyP99)))
    }

    /// One server, `clients` stream clients, both phases; throws on any missed, repeated or
    /// reordered event.
    func measure(clients count: Int) throws -> Outcome {
        // Each client holds one descriptor here and one in the server (same process).
        Self.raiseDescriptorLimit(to: 2 * count + 256)
        let path = workDirectory.appendingPathComponent("fanout-bench.sqlite").path
        let remove = {
            for suffix in ["", "-wal", "-shm", ".webhooks", ".webhooks-wal", ".webhooks-shm"] {
                try? FileManager.default.removeItem(atPath: path + suffix)
            }
        }
        remove()
        defer { remove() }
        var configuration = ServerConfiguration(databasePath: path, address: "127.0.0.1", port: 0, threads: 4,
                                                api: APIConfiguration(heartbeatInterval: 15), drainTimeout: 2)
        // Every client of the benchmark comes from 127.0.0.1: no per-address limit.
        configuration.maximumConnectionsPerAddress = 0
        let server = try PerimeterServer(configuration: configuration)
        defer { server.stop() }
        _ = try server.api.importFeatures(Array(Self.fence.utf8))

        let clients = try SSEClients(port: server.port, count: count, path: "/v1/events/stream")
        defer { clients.stop() }
        try clients.waitUntilConnected(timeout: 60)
        guard let poster = LoadConnection(port: server.port) else {
            throw FanoutFailure(delivered: 0, expected: 0, detail: "cannot connect to 127.0.0.1:\(server.port) to post updates")
        }
        defer { poster.close() }
        var expected: [Int64] = []
        var post = 0

        // Throughput: back to back.
        var sent: [Double] = []
        let start = Measure.wallSeconds()
        for _ in 0..<throughputPosts {
            sent.append(Measure.wallSeconds())
            expected += try send(post, on: poster)
            post += 1
        }
        guard clients.waitForDeliveries(expected.count * count, timeout: 30) else {
            throw FanoutFailure(delivered: clients.deliveredCount, expected: expected.count * count, detail: clients.firstFailure)
        }
        let throughputEvents = expected.count

        // Latency: one post at a time.
        var latencyPosts: [(sent: Double, ids: [Int64])] = []
        for _ in 0..<self.latencyPosts {
            let t0 = Measure.wallSeconds()
            let ids = try send(post, on: poster)
            post += 1
            expected += ids
            latencyPosts.append((t0, ids))
            guard clients.waitForDeliveries(expected.count * count, timeout: 30) else {
                throw FanoutFailure(delivered: clients.deliveredCount, expected: expected.count * count, detail: clients.firstFailure)
            }
        }
        clients.stop()

        // Every client: exactly the expected ids, in order; the last arrival of each id.
        var lastArrival: [Int64: Double] = [:]
        for index in 0..<count {
            let ids = clients.receivedIDs(of: index)
            guard ids == expected else {
                let first = zip(ids, expected).enumerated().first { $0.element.0 != $0.element.1 }
                throw FanoutFailure(delivered: ids.count, expected: expected.count,
                                    detail: "client \(index): " + (first.map { "event \($0.offset) is \($0.element.0), expected \($0.element.1)" }
                                        ?? "\(ids.count) events, expected \(expected.count)"))
            }
            for (id, time) in zip(ids, clients.arrivalTimes(of: index)) where time > lastArrival[id] ?? 0 {
                lastArrival[id] = time
            }
        }
        let throughputEnd = expected.prefix(throughputEvents).compactMap { lastArrival[$0] }.max() ?? start
        let latencies = latencyPosts.map { post in (post.ids.compactMap { lastArrival[$0] }.max() ?? post.sent) - post.sent }
        return Outcome(deliveriesPerSecond: Double(throughputEvents * count) / max(1e-9, throughputEnd - start),
                       latencies: latencies, events: expected.count)
    }

    /// Posts update batch `number`: every device enters the fence (even numbers) or leaves it (odd);
    /// returns the sequences of the events it caused (exactly ``eventsPerPost``).
    func send(_ number: Int, on poster: LoadConnection) throws -> [Int64] {
        let inside = number % 2 == 0
        let time = RFC3339.string(from: Date(timeIntervalSince1970: 1_700_000_000 + Double(number)))
        let updates: [JSONValue] = (0..<eventsPerPost).map { device in
            ["deviceId": .string("fan-\(device)"), "latitude": inside ? 44.6 : 45.5, "longitude": -110.5, "time": .string(time)]
        }
        let request = HTTPLoadGenerator.Request(method: "POST", path: "/v1/locations", contentType: "application/json",
                                                body: Array(JSONWriter().string(.array(updates)).utf8))
        guard poster.send(request.bytes), let (status, body) = poster.receiveResponse() else {
            throw FanoutFailure(delivered: 0, expected: 0, detail: "post \(number): the connection failed or the server did not answer within 30 s")
        }
        guard status == 200, case .array(let events)? = (try? JSONParser().parse(body))?["events"] else {
            throw FanoutFailure(delivered: 0, expected: 0, detail: "POST /v1/locations answered \(status): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        let ids = events.compactMap { event -> Int64? in
            if case .integer(let sequence)? = event["sequence"] { return sequence }
            return nil
        }
        guard ids.count == eventsPerPost else {
            throw FanoutFailure(delivered: 0, expected: 0, detail: "post \(number) caused \(ids.count) events, expected \(eventsPerPost)")
        }
        return ids
    }

    /// The one fence: a square around (44.6, -110.5).
    static let fence = #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"square","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-110.6,44.5],[-110.4,44.5],[-110.4,44.7],[-110.6,44.7],[-110.6,44.5]]]}}]}"#

    /// The value below which `fraction` of `samples` lie (nearest rank); 0 when empty.
    static func percentile(_ samples: [Double], _ fraction: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(max(rank, 0), sorted.count - 1)]
    }

    /// Raises the soft descriptor limit to `wanted` when the hard limit allows.
    static func raiseDescriptorLimit(to wanted: Int) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < rlim_t(wanted) else { return }
        limit.rlim_cur = min(rlim_t(wanted), limit.rlim_max)
        _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
}

/// A fan-out run in which some client missed, repeated or reordered an event, or the server failed.
struct FanoutFailure: Error, CustomStringConvertible {
    var delivered: Int
    var expected: Int
    var detail: String?

    var description: String {
        expected > 0 ? "\(delivered) of \(expected) deliveries; \(detail ?? "a client stalled")" : (detail ?? "failed")
    }
}
