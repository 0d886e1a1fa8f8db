import Foundation
import Synchronization

/// The server's counters, rendered in the Prometheus text format at `/metrics`.
///
/// Thread-safe; every `record…` call is O(1). The webhooks module reports deliveries through
/// ``recordWebhookDelivery(outcome:)`` and its queue through ``setWebhookPending(_:)``.
public final class Metrics: Sendable {
    /// Upper bounds (seconds) of the request latency histogram buckets.
    public static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    struct State {
        var updatesAccepted = 0
        var updatesRejected: [String: Int] = [:]
        var events: [String: Int] = [:]
        var webhookDeliveries: [String: Int] = [:]
        var webhookPending = 0
        var requests: [Int: Int] = [:]
        /// Requests per latency bucket, not cumulative (the last slot: above the largest bound).
        var latencyCounts = [Int](repeating: 0, count: Metrics.latencyBuckets.count + 1)
        var latencyCount = 0
        var latencySum = 0.0
        var sseClients = 0
    }

    let state = Mutex(State())
    /// Reads `perimeter_webhook_deliveries_total` from the stores at scrape time, when set.
    let webhookDeliveryTotals = Mutex<(@Sendable () -> [String: Int]?)?>(nil)
    /// Reads the transport's refusals at scrape time, when set (``readConnectionRefusals(from:)``).
    let connectionRefusals = Mutex<(@Sendable () -> [String: Int])?>(nil)

    /// Creates empty metrics.
    public init() {}

    /// Counts accepted updates.
    public func recordUpdates(accepted: Int) { state.withLock { $0.updatesAccepted += accepted } }

    /// Counts one rejected update by reason (a ``GeofencingError`` code or a decoding problem).
    public func recordRejectedUpdate(reason: String) { state.withLock { $0.updatesRejected[reason, default: 0] += 1 } }

    /// Counts one event of `type` (entry, dwell, exit …).
    public func recordEvent(type: String) { state.withLock { $0.events[type, default: 0] += 1 } }

    /// Counts one webhook delivery attempt by outcome (`delivered`, `failed`, `expired`, `dead` …).
    public func recordWebhookDelivery(outcome: String) {
        state.withLock { $0.webhookDeliveries[outcome, default: 0] += 1 }
    }

    /// Makes `perimeter_webhook_deliveries_total` come from `read` at every scrape (counters kept in the
    /// webhook store survive restarts; counted here they would restart at zero with the process).
    /// When `read` returns `nil` (the store failed), the counts recorded since the start are shown.
    public func readWebhookDeliveries(from read: (@Sendable () -> [String: Int]?)?) {
        webhookDeliveryTotals.withLock { $0 = read }
    }

    /// Makes `perimeter_http_connections_refused_total{reason}` come from `read` at every scrape:
    /// connections the transport closed for their client address's limit (`per_address`) or for
    /// missing the request deadline (`deadline`).
    public func readConnectionRefusals(from read: (@Sendable () -> [String: Int])?) {
        connectionRefusals.withLock { $0 = read }
    }

    /// Sets the number of webhook deliveries waiting (kept until delivered or expired).
    public func setWebhookPending(_ count: Int) { state.withLock { $0.webhookPending = count } }

    /// Adjusts the number of connected SSE clients.
    public func adjustStreamClients(by delta: Int) { state.withLock { $0.sseClients += delta } }

    /// Records one finished request.
    /// - Complexity: O(1): one bucket is counted (the histogram is made cumulative when rendered), and
    ///   no string is built (this runs on every request).
    public func recordRequest(status: Int, seconds: Double) {
        let buckets = Self.latencyBuckets
        var bucket = 0
        while bucket < buckets.count && seconds > buckets[bucket] { bucket += 1 }
        state.withLock { s in
            s.requests[status, default: 0] += 1
            s.latencyCount += 1
            s.latencySum += seconds
            s.latencyCounts[bucket] += 1
        }
    }

    /// The metrics in the Prometheus text exposition format; `gauges` adds values sampled now
    /// (store size, fences, last sequence).
    public func render(gauges: [(name: String, help: String, value: Double)] = []) -> String {
        var s = state.withLock { $0 }
        if let read = webhookDeliveryTotals.withLock({ $0 }), let totals = read() { s.webhookDeliveries = totals }
        var text = ""
        func family(_ name: String, _ type: String, _ help: String) {
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func number(_ value: Double) -> String {
            value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        }
        func labelled(_ name: String, _ label: String, _ values: [String: Int]) {
            for key in values.keys.sorted() {
                text += "\(name){\(label)=\"\(Self.escape(key))\"} \(values[key] ?? 0)\n"
            }
        }
        family("perimeter_updates_accepted_total", "counter", "Location updates accepted.")
        text += "perimeter_updates_accepted_total \(s.updatesAccepted)\n"
        family("perimeter_updates_rejected_total", "counter", "Location updates rejected, by reason.")
        labelled("perimeter_updates_rejected_total", "reason", s.updatesRejected)
        family("perimeter_events_total", "counter", "Geofence events, by type.")
        labelled("perimeter_events_total", "type", s.events)
        family("perimeter_webhook_deliveries_total", "counter", "Webhook delivery attempts, by outcome.")
        labelled("perimeter_webhook_deliveries_total", "outcome", s.webhookDeliveries)
        family("perimeter_webhook_pending", "gauge", "Webhook deliveries waiting; kept until delivered or expired.")
        text += "perimeter_webhook_pending \(s.webhookPending)\n"
        family("perimeter_http_requests_total", "counter", "HTTP requests, by status.")
        for status in s.requests.keys.sorted() {
            text += "perimeter_http_requests_total{status=\"\(status)\"} \(s.requests[status] ?? 0)\n"
        }
        family("perimeter_http_request_duration_seconds", "histogram", "HTTP request latency.")
        var cumulative = 0
        for (index, bound) in Self.latencyBuckets.enumerated() {
            cumulative += s.latencyCounts[index]
            text += "perimeter_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        text += "perimeter_http_request_duration_seconds_bucket{le=\"+Inf\"} \(s.latencyCount)\n"
        text += "perimeter_http_request_duration_seconds_sum \(s.latencySum)\n"
        text += "perimeter_http_request_duration_seconds_count \(s.latencyCount)\n"
        if let read = connectionRefusals.withLock({ $0 }) {
            family("perimeter_http_connections_refused_total", "counter",
                   "Connections closed by the transport: over the per-address limit, or past the request deadline.")
            labelled("perimeter_http_connections_refused_total", "reason", read())
        }
        family("perimeter_sse_clients", "gauge", "Connected event-stream clients.")
        text += "perimeter_sse_clients \(s.sseClients)\n"
        for gauge in gauges {
            family(gauge.name, "gauge", gauge.help)
            text += "\(gauge.name) \(number(gauge.value))\n"
        }
        return text
    }

    static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }
}
