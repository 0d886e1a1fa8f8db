import Foundation
import PerimeterService

/// Hands the service's logged events to the event hub and the metrics on a thread of its own, in log
/// order, a few at a time.
///
/// The service calls ``append(_:)`` (its event sink, set `whenStored`) with the events of every commit
/// once it succeeded, while it holds its lock: appending is a queue push. The feeder thread wakes when the queue was empty, lets events gather for
/// ``coalescing`` seconds, then publishes everything queued. Under load that is one thread wake-up per
/// interval instead of one per event (a task resumed for every event of a stream cost a wake-up and a
/// context switch each); an SSE client sees an event at most that much later.
final class EventFeeder: @unchecked Sendable {
    // @unchecked: `queue` and `stopping` are only touched with `condition`'s lock held.
    private let condition = NSCondition()
    private var queue: [GeofencingEvent] = []
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    /// How long events gather after the first one before they are published.
    let coalescing: TimeInterval
    private let publish: @Sendable ([GeofencingEvent]) -> Void

    /// Starts the feeder thread; `publish` gets the events in log order, on that thread.
    init(coalescing: TimeInterval = 0.001, publish: @escaping @Sendable ([GeofencingEvent]) -> Void) {
        self.coalescing = coalescing
        self.publish = publish
        let thread = Thread { [self] in run() }
        thread.name = "perimeter-event-feeder"
        thread.start()
    }

    /// Queues `events` (in log order after those queued before).
    /// - Complexity: amortised O(`events.count`); a thread wake-up only when the queue was empty.
    func append(_ events: [GeofencingEvent]) {
        condition.lock()
        let wake = queue.isEmpty
        queue.append(contentsOf: events)
        if wake { condition.signal() }
        condition.unlock()
    }

    /// Publishes what is queued, then ends the thread; returns once it ended. Later appends are dropped.
    func stop() {
        condition.lock()
        let first = !stopping
        stopping = true
        condition.signal()
        condition.unlock()
        if first { finished.wait() }
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                finished.signal()
                return
            }
            let gather = !stopping
            condition.unlock()
            if gather { Thread.sleep(forTimeInterval: coalescing) }
            condition.lock()
            let events = queue
            queue.removeAll(keepingCapacity: true)
            condition.unlock()
            publish(events)
        }
    }
}
