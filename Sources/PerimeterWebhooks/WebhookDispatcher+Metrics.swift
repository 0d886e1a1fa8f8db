extension WebhookDispatcher {
    /// Per-webhook metrics for `/metrics`, in the Prometheus text exposition format (version 0.0.4),
    /// complementing the server-wide `perimeter_webhook_deliveries_total{outcome}` and
    /// `perimeter_webhook_pending` (fed through the dispatcher's outcome observer):
    /// `perimeter_webhook_events_total{webhook,outcome}` (delivered, failed_attempt, dead_lettered),
    /// `perimeter_webhook_backlog{webhook}`, `perimeter_webhook_dead_letters{webhook}` and
    /// `perimeter_webhook_retry_window_seconds` (undelivered events are retried this long, then kept
    /// as dead letters until redriven or the webhook is deleted: never dropped).
    /// - Complexity: O(webhooks) store reads.
    public func metricsText() throws(WebhookError) -> String {
        let statuses = try webhooks()
        var lines: [String] = [
            "# HELP perimeter_webhook_events_total Webhook delivery outcomes, per webhook.",
            "# TYPE perimeter_webhook_events_total counter",
        ]
        for status in statuses {
            let id = Self.label(status.registration.id)
            lines.append("perimeter_webhook_events_total{webhook=\"\(id)\",outcome=\"delivered\"} \(status.counters.delivered)")
            lines.append("perimeter_webhook_events_total{webhook=\"\(id)\",outcome=\"failed_attempt\"} \(status.counters.failedAttempts)")
            lines.append("perimeter_webhook_events_total{webhook=\"\(id)\",outcome=\"dead_lettered\"} \(status.counters.deadLettered)")
        }
        lines += ["# HELP perimeter_webhook_backlog Log events not yet delivered to the webhook (upper bound) plus the one being retried.",
                  "# TYPE perimeter_webhook_backlog gauge"]
        for status in statuses {
            let pending = status.backlog + (status.inFlight == nil ? 0 : 1)
            lines.append("perimeter_webhook_backlog{webhook=\"\(Self.label(status.registration.id))\"} \(pending)")
        }
        lines += ["# HELP perimeter_webhook_dead_letters Events kept after the retry window, until redriven.",
                  "# TYPE perimeter_webhook_dead_letters gauge"]
        for status in statuses {
            lines.append("perimeter_webhook_dead_letters{webhook=\"\(Self.label(status.registration.id))\"} \(status.deadLetters)")
        }
        lines += ["# HELP perimeter_webhook_retry_window_seconds How long a failing event is retried before it is dead-lettered (never dropped).",
                  "# TYPE perimeter_webhook_retry_window_seconds gauge",
                  "perimeter_webhook_retry_window_seconds \(configuration.retryPolicy.retention)"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// Events waiting over all webhooks (backlog upper bound plus attempts being retried): the value
    /// of the server-wide `perimeter_webhook_pending` gauge.
    public func pendingCount() throws(WebhookError) -> Int64 {
        try webhooks().reduce(0) { $0 + $1.backlog + ($1.inFlight == nil ? 0 : 1) }
    }

    /// The server-wide `perimeter_webhook_deliveries_total{outcome}`, read from the stored per-webhook
    /// counters (so it survives restarts): `delivered`, `failed` (every failed attempt, those that ended
    /// in a dead letter included) and `dead` (events dead-lettered), each always present. A deleted
    /// webhook's counts leave with it.
    /// - Complexity: O(webhooks) store reads.
    public func deliveryTotals() throws(WebhookError) -> [String: Int] {
        var totals = [WebhookDeliveryOutcome.delivered.rawValue: 0, WebhookDeliveryOutcome.failed.rawValue: 0,
                      WebhookDeliveryOutcome.dead.rawValue: 0]
        for status in try webhooks() {
            totals[WebhookDeliveryOutcome.delivered.rawValue, default: 0] += Int(status.counters.delivered)
            totals[WebhookDeliveryOutcome.failed.rawValue, default: 0] += Int(status.counters.failedAttempts)
            totals[WebhookDeliveryOutcome.dead.rawValue, default: 0] += Int(status.counters.deadLettered)
        }
        return totals
    }

    /// Escapes a Prometheus label value.
    static func label(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }
}
