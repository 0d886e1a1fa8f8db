import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService
import Synchronization

/// Fans events out to Server-Sent-Events clients, each with its filter, resuming from the durable log.
///
/// Frames are `id: <sequence>`, `event: <type>`, `data: <event JSON>`; heartbeats are SSE comments.
/// A client resuming after sequence N first receives the logged events after N (read from the store),
/// then the live ones, each exactly once and in sequence order.
public final class EventHub: Sendable {
    struct Subscriber {
        var stream: HTTPStream
        var filter: EventFilter
        var catchingUp: Bool
        var pending: [(LoggedEvent, String?)]
        var lastSent: Int64
    }

    struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var lastPublished: Int64 = 0
        var closed = false
    }

    let state = Mutex(State())
    let service: GeofencingService
    let metrics: Metrics

    /// A hub for `service`'s events.
    public init(service: GeofencingService, metrics: Metrics) {
        self.service = service
        self.metrics = metrics
    }

    /// Connected clients.
    public var clientCount: Int { state.withLock { $0.subscribers.count } }

    /// Sends a live event to every matching client (called in sequence order by one feeder).
    public func publish(_ logged: LoggedEvent) {
        let fence = (try? service.fence(id: logged.event.fence)) ?? nil
        let group = fence?.group
        let frame = Self.frame(logged, fence: fence)
        state.withLock { s in
            s.lastPublished = max(s.lastPublished, logged.sequence)
            var gone: [Int] = []
            for (id, var subscriber) in s.subscribers {
                if subscriber.catchingUp {
                    subscriber.pending.append((logged, group))
                    s.subscribers[id] = subscriber
                    continue
                }
                guard logged.sequence > subscriber.lastSent else { continue }
                subscriber.lastSent = logged.sequence
                s.subscribers[id] = subscriber
                if subscriber.filter.matches(logged, group: group),
                   !subscriber.stream.write(frame) {
                    gone.append(id)
                }
            }
            for id in gone { s.subscribers[id] = nil }
        }
    }

    /// Registers `stream`; with `after`, first replays the logged events after that sequence.
    /// - Throws: ``GeofencingError`` when the log cannot be read (the stream is then not registered).
    public func subscribe(_ stream: HTTPStream, filter: EventFilter, after: Int64?) throws(GeofencingError) {
        _ = stream.write(Array("retry: 2000\n: connected\n\n".utf8))
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.subscribers[s.nextID] = Subscriber(stream: stream, filter: filter, catchingUp: after != nil, pending: [],
                                                 lastSent: after ?? 0)
            if s.closed { stream.finish() }
            return s.nextID
        }
        metrics.adjustStreamClients(by: 1)
        stream.onClose { [metrics] in metrics.adjustStreamClients(by: -1) }
        guard var cursor = after else { return }
        do {
            // Waits for any call that already logged events to finish its commit, so the store holds
            // everything published so far.
            try service.flush()
            while true {
                let page = try service.loggedEvents(after: cursor, limit: 500)
                for logged in page {
                    let fence = (try? service.fence(id: logged.event.fence)) ?? nil
                    if filter.matches(logged, group: fence?.group) {
                        _ = stream.write(Self.frame(logged, fence: fence))
                    }
                    cursor = logged.sequence
                }
                if page.count < 500 { break }
            }
        } catch {
            _ = state.withLock { $0.subscribers.removeValue(forKey: id) }
            throw error
        }
        state.withLock { s in
            guard var subscriber = s.subscribers[id] else { return }
            for (logged, group) in subscriber.pending where logged.sequence > cursor {
                cursor = logged.sequence
                if filter.matches(logged, group: group) {
                    let fence = (try? service.fence(id: logged.event.fence)) ?? nil
                    _ = stream.write(Self.frame(logged, fence: fence))
                }
            }
            subscriber.pending = []
            subscriber.catchingUp = false
            subscriber.lastSent = cursor
            s.subscribers[id] = subscriber
        }
    }

    /// Writes an SSE comment to every client and forgets those that went away.
    public func heartbeat() {
        let frame = Array(": heartbeat\n\n".utf8)
        state.withLock { s in
            for (id, subscriber) in s.subscribers where !subscriber.stream.write(frame) {
                s.subscribers[id] = nil
            }
        }
    }

    /// Ends every stream (server stopping); later subscriptions end at once.
    public func finishAll() {
        state.withLock { s in
            s.closed = true
            for subscriber in s.subscribers.values { subscriber.stream.finish() }
            s.subscribers = [:]
        }
    }

    static func frame(_ logged: LoggedEvent, fence: Fence?) -> [UInt8] {
        var bytes = Array("id: \(logged.sequence)\nevent: \(logged.event.kind.rawValue)\ndata: ".utf8)
        JSONWriter().write(EventJSON.value(logged, fence: fence), into: &bytes)
        bytes.append(contentsOf: [10, 10])
        return bytes
    }
}
