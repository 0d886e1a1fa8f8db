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
///
/// Clients that asked for positions (``EventFilter/locations``) also get `event: location` messages
/// (``publishLocations(_:)``) without an `id:` line, so `Last-Event-ID` keeps counting events only. They
/// are throttled per device: at most one per ``locationInterval`` seconds, the latest position winning,
/// and the last position of a burst is always sent (after the interval).
///
/// Fan-out cost: one frame is built per event and appended to each matching client's buffer; a client
/// whose buffer passes ``HTTPStream/bufferLimit`` (it stopped reading) is disconnected, and resumes
/// with `Last-Event-ID` without missing anything.
public final class EventHub: Sendable {
    /// One connected client; its fields are touched only under the hub's lock.
    final class Subscriber: @unchecked Sendable {
        let stream: HTTPStream
        let filter: EventFilter
        var catchingUp: Bool
        /// Whether a replay step runs now (one at a time per client).
        var replaying = false
        /// Whether the stream drained while a step ran: the step then runs again.
        var replayAgain = false
        /// Events read from the store and not yet written (only touched by the replay step running).
        var replayPage: ArraySlice<GeofencingEvent> = []
        var lastSent: Int64

        init(stream: HTTPStream, filter: EventFilter, catchingUp: Bool, lastSent: Int64) {
            self.stream = stream
            self.filter = filter
            self.catchingUp = catchingUp
            self.lastSent = lastSent
        }
    }

    /// Where a device's position messages stand in the throttle.
    struct Throttle {
        /// Monotonic seconds of the last message sent for the device.
        var lastSent: Double
        /// A newer position waiting for the interval to pass.
        var waiting: LocationUpdate?
    }

    struct State {
        var subscribers: [Int: Subscriber] = [:]
        var locationSubscribers = 0
        var nextID = 0
        var lastPublished: Int64 = 0
        var closed = false
        var throttles: [DeviceID: Throttle] = [:]
        var flushScheduled = false
    }

    let state = Mutex(State())
    /// How far behind one client may fall, and the budget all clients share (``setStreamLimits(perClient:shared:)``).
    let streamLimits = Mutex<(perClient: Int, shared: HTTPStreamBudget?)>((8 << 20, nil))
    let service: GeofencingService
    let metrics: Metrics
    /// Least time in seconds between two `location` messages of one device.
    public let locationInterval: Double

    /// A hub for `service`'s events; `locationInterval` throttles position messages per device.
    public init(service: GeofencingService, metrics: Metrics, locationInterval: Double = 0.25) {
        self.service = service
        self.metrics = metrics
        self.locationInterval = max(0, locationInterval)
    }

    /// Connected clients.
    public var clientCount: Int { state.withLock { $0.subscribers.count } }

    /// Sets the unsent bytes one client may have before it is cut (8 MiB by default) and the budget
    /// that all clients' unsent bytes share (none by default); for streams opened from now on.
    public func setStreamLimits(perClient: Int, shared: HTTPStreamBudget?) {
        streamLimits.withLock { $0 = (max(1, perClient), shared) }
    }

    /// A stream for a new client, with the hub's limits.
    public func makeStream() -> HTTPStream {
        let limits = streamLimits.withLock { $0 }
        return HTTPStream(bufferLimit: limits.perClient, budget: limits.shared)
    }

    /// Sends a live event to every matching client (called in sequence order by one feeder).
    /// - Complexity: O(clients); the frame is encoded at most once with the fence's properties and once
    ///   without, and not at all without clients that want it.
    public func publish(_ logged: GeofencingEvent) {
        state.withLock { s in
            s.lastPublished = max(s.lastPublished, logged.sequence)
            var frames = Frames(logged)
            var gone: [Int] = []
            for (id, subscriber) in s.subscribers {
                // A client replaying the log reads this event from the store when it gets there.
                if subscriber.catchingUp { continue }
                guard logged.sequence > subscriber.lastSent else { continue }
                subscriber.lastSent = logged.sequence
                if subscriber.filter.matches(logged),
                   !subscriber.stream.write(frames.frame(properties: subscriber.filter.properties)) {
                    gone.append(id)
                }
            }
            for id in gone { Self.remove(id, from: &s) }
        }
    }

    /// Sends the positions of accepted updates as `event: location` messages to the clients that asked
    /// for them, throttled per device (see the type's documentation). Call it after the service
    /// accepted the updates, in their order; rejected updates must not be passed.
    /// - Complexity: O(updates + clients × devices sent).
    public func publishLocations<Updates: Sequence>(_ updates: Updates) where Updates.Element == LocationUpdate {
        let now = Self.now()
        let scheduleFlush = state.withLock { s -> Bool in
            guard s.locationSubscribers > 0, !s.closed else { return false }
            var due: [LocationUpdate] = []
            var dueIndex: [DeviceID: Int] = [:]
            for update in updates {
                var throttle = s.throttles[update.device] ?? Throttle(lastSent: -.infinity)
                if let index = dueIndex[update.device] {
                    due[index] = update  // a later update of the same batch replaces the one sent now
                } else if now - throttle.lastSent >= locationInterval {
                    dueIndex[update.device] = due.count
                    due.append(update)
                    throttle.lastSent = now
                    throttle.waiting = nil
                } else {
                    throttle.waiting = update
                }
                s.throttles[update.device] = throttle
            }
            Self.send(due, in: &s)
            guard !s.flushScheduled, s.throttles.values.contains(where: { $0.waiting != nil }) else { return false }
            s.flushScheduled = true
            return true
        }
        if scheduleFlush { scheduleLocationFlush() }
    }

    /// Registers `stream`; with `after`, first replays the logged events after that sequence.
    ///
    /// The replay is paced by the client: it writes up to half the stream's buffer limit, then the
    /// next part each time the client has taken everything (``HTTPStream/onDrain(_:)``), so a client
    /// resuming far back costs a bounded buffer, not the whole backlog at once. It reads the store
    /// until it holds nothing newer than the last event published, and switches to live events under
    /// the hub's lock: events are published only once stored (the service's sink `whenStored`), so
    /// none falls between the replay and the live events, and none comes twice.
    /// - Throws: ``GeofencingError`` when the log cannot be read (the stream is then not registered).
    public func subscribe(_ stream: HTTPStream, filter: EventFilter, after: Int64?) throws(GeofencingError) {
        _ = stream.write(Array("retry: 2000\n: connected\n\n".utf8))
        let subscriber = Subscriber(stream: stream, filter: filter, catchingUp: after != nil, lastSent: after ?? 0)
        let id = state.withLock { s -> Int in
            s.nextID += 1
            s.subscribers[s.nextID] = subscriber
            if filter.locations { s.locationSubscribers += 1 }
            if s.closed { stream.finish() }
            if after == nil { subscriber.lastSent = s.lastPublished }
            return s.nextID
        }
        metrics.adjustStreamClients(by: 1)
        stream.onClose { [metrics] in metrics.adjustStreamClients(by: -1) }
        guard after != nil else { return }
        stream.onDrain { [weak self] in self?.replay(id) }
        do {
            try replayStep(id, subscriber)
        } catch {
            stream.onDrain(nil)
            state.withLock { Self.remove(id, from: &$0) }
            throw error
        }
    }

    /// The replay step of client `id` when its stream drained (a read failure ends its stream).
    func replay(_ id: Int) {
        guard let subscriber = state.withLock({ $0.subscribers[id] }) else { return }
        do {
            try replayStep(id, subscriber)
        } catch {
            subscriber.stream.finish()
            state.withLock { Self.remove(id, from: &$0) }
        }
    }

    /// Writes logged events after the client's position until its buffer holds half its limit (the
    /// rest when it drains), or switches it to live events once the store has nothing newer than the
    /// last event published.
    func replayStep(_ id: Int, _ subscriber: Subscriber) throws(GeofencingError) {
        let start = state.withLock { s -> Bool in
            guard s.subscribers[id] != nil, subscriber.catchingUp else { return false }
            guard !subscriber.replaying else {
                subscriber.replayAgain = true  // the running step goes on: a drain must not be lost
                return false
            }
            subscriber.replaying = true
            return true
        }
        guard start else { return }
        while true {
            do {
                try replayPart(subscriber)
            } catch {
                state.withLock { _ in
                    subscriber.replaying = false
                    subscriber.replayAgain = false
                }
                throw error
            }
            let again = state.withLock { _ -> Bool in
                if subscriber.replayAgain, subscriber.catchingUp {
                    subscriber.replayAgain = false
                    return true
                }
                subscriber.replaying = false
                return false
            }
            if !again { return }
        }
    }

    /// One part of a replay (see ``replayStep(_:_:)``); only one runs at a time per client.
    func replayPart(_ subscriber: Subscriber) throws(GeofencingError) {
        var cursor = state.withLock { _ in subscriber.lastSent }
        let stream = subscriber.stream, filter = subscriber.filter
        let target = max(1, stream.bufferLimit / 2)
        while true {
            var exhausted = false
            if subscriber.replayPage.isEmpty {
                let page = try service.loggedEvents(after: cursor, limit: 256)
                subscriber.replayPage = page[...]
                exhausted = page.count < 256
            }
            while let logged = subscriber.replayPage.first {
                if stream.isClosed { return }
                if stream.unsentByteCount >= target {
                    state.withLock { _ in subscriber.lastSent = cursor }
                    return  // the rest when the client has read this
                }
                if filter.matches(logged), !stream.write(Self.frame(logged, properties: filter.properties)) { return }
                cursor = logged.sequence
                subscriber.replayPage.removeFirst()
            }
            guard exhausted else { continue }
            let live = state.withLock { s -> Bool in
                subscriber.lastSent = cursor
                guard s.lastPublished <= cursor else { return false }
                subscriber.catchingUp = false
                return true
            }
            if live {
                stream.onDrain(nil)
                return
            }
        }
    }

    /// Writes an SSE comment to every client and forgets those that went away.
    public func heartbeat() {
        let frame = Array(": heartbeat\n\n".utf8)
        state.withLock { s in
            var gone: [Int] = []
            for (id, subscriber) in s.subscribers where !subscriber.stream.write(frame) { gone.append(id) }
            for id in gone { Self.remove(id, from: &s) }
        }
    }

    /// Ends every stream (server stopping); later subscriptions end at once.
    public func finishAll() {
        state.withLock { s in
            s.closed = true
            for subscriber in s.subscribers.values { subscriber.stream.finish() }
            s.subscribers = [:]
            s.locationSubscribers = 0
            s.throttles = [:]
        }
    }

    // MARK: - Internals

    static func remove(_ id: Int, from s: inout State) {
        guard let subscriber = s.subscribers.removeValue(forKey: id) else { return }
        if subscriber.filter.locations { s.locationSubscribers -= 1 }
        if s.locationSubscribers == 0 { s.throttles = [:] }
    }

    /// Writes one `location` message per update to the clients that want it (under the lock).
    static func send(_ updates: [LocationUpdate], in s: inout State) {
        guard !updates.isEmpty else { return }
        var gone: [Int] = []
        for update in updates {
            let frame = locationFrame(update)
            for (id, subscriber) in s.subscribers where subscriber.filter.locations {
                let devices = subscriber.filter.devices
                guard devices.isEmpty || devices.contains(update.device.rawValue) else { continue }
                if !subscriber.stream.write(frame) { gone.append(id) }
            }
        }
        for id in gone { remove(id, from: &s) }
    }

    /// Sends the positions that waited for their interval once it has passed, and reschedules itself
    /// while some still wait.
    func scheduleLocationFlush() {
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0.01, locationInterval)) { [self] in
            let now = Self.now()
            let again = state.withLock { s -> Bool in
                guard !s.closed, s.locationSubscribers > 0 else {
                    s.flushScheduled = false
                    return false
                }
                var due: [LocationUpdate] = []
                var waiting = false
                for (device, throttle) in s.throttles {
                    guard let update = throttle.waiting else { continue }
                    if now - throttle.lastSent >= locationInterval {
                        due.append(update)
                        s.throttles[device] = Throttle(lastSent: now, waiting: nil)
                    } else {
                        waiting = true
                    }
                }
                Self.send(due, in: &s)
                s.flushScheduled = waiting
                return waiting
            }
            if again { scheduleLocationFlush() }
        }
    }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// `id: <sequence>`, `event: <type>`, `data: <event JSON>` (with the fence's properties or not).
    static func frame(_ logged: GeofencingEvent, properties: Bool) -> [UInt8] {
        var bytes = Array("id: \(logged.sequence)\nevent: \(logged.event.kind.rawValue)\ndata: ".utf8)
        logged.writeJSON(into: &bytes, properties: properties)
        bytes.append(contentsOf: [10, 10])
        return bytes
    }

    /// An event's two frames (with and without the fence's properties), each built when first needed.
    struct Frames {
        let logged: GeofencingEvent
        var withProperties: [UInt8]?
        var withoutProperties: [UInt8]?

        init(_ logged: GeofencingEvent) { self.logged = logged }

        mutating func frame(properties: Bool) -> [UInt8] {
            if properties {
                if withProperties == nil { withProperties = EventHub.frame(logged, properties: true) }
                return withProperties!
            }
            if withoutProperties == nil { withoutProperties = EventHub.frame(logged, properties: false) }
            return withoutProperties!
        }
    }

    /// `event: location` with `{"deviceId","time","latitude","longitude","accuracy"?}` and no `id:`.
    static func locationFrame(_ update: LocationUpdate) -> [UInt8] {
        var object: [String: JSONValue] = [
            "deviceId": .string(update.device.rawValue),
            "time": .string(RFC3339.string(from: update.time)),
            "latitude": .double(update.coordinate.latitude),
            "longitude": .double(update.coordinate.longitude),
        ]
        if let accuracy = update.horizontalAccuracy, accuracy.isFinite { object["accuracy"] = .double(accuracy) }
        var bytes = Array("event: location\ndata: ".utf8)
        JSONWriter().write(.object(object), into: &bytes)
        bytes.append(contentsOf: [10, 10])
        return bytes
    }
}
