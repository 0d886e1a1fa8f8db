import PerimeterEngine
import PerimeterFences
import Synchronization

/// A store that keeps everything in memory: for tests and for apps that need no durability.
///
/// A service reopened on the same instance resumes exactly, as with a durable store; nothing survives
/// the process.
public final class InMemoryGeofencingStore: GeofencingStore {
    private struct Contents {
        var fences: [FenceID: StoredFence] = [:]
        var devices: [DeviceID: DetectionEngine.DeviceSnapshot] = [:]
        var deviceOrder: [DeviceID] = []
        var serviceConsent: Bool?
        var deviceConsents: [DeviceID: Bool] = [:]
        var events = EventLog()
        var processedUpdates: UInt64 = 0
        var acceptedSequence: Int64 = 0
        var arrivals: UInt64 = 0
    }

    private let contents = Mutex(Contents())

    /// An empty store.
    public init() {}

    /// - Complexity: O(fences log fences + devices).
    public func load() throws -> StoredState {
        contents.withLock { c in
            var state = StoredState()
            state.fences = c.fences.values.sorted { $0.position < $1.position }
            state.devices = c.deviceOrder.compactMap { c.devices[$0] }
            state.serviceConsent = c.serviceConsent
            state.deviceConsents = c.deviceConsents
            state.lastEventSequence = Int64(c.events.count)
            state.processedUpdates = c.processedUpdates
            state.acceptedSequence = c.acceptedSequence
            state.arrivals = c.arrivals
            return state
        }
    }

    /// Applies `changes` atomically (it checks the event sequence before changing anything).
    public func commit(_ changes: StoreChanges) throws {
        try contents.withLock { (c: inout Contents) throws(GeofencingError) in
            var next = Int64(c.events.count) + 1
            for logged in changes.events {
                guard logged.sequence == next else {
                    throw GeofencingError(.storageFailure, "event sequence \(logged.sequence) does not continue the log (expected \(next))")
                }
                next += 1
            }
            for change in changes.fences {
                switch change {
                case .upsert(var fence):
                    if let old = c.fences[fence.id] { fence.position = old.position }
                    // A text given as a slice of an import's body is copied out: kept as a slice, it would
                    // keep the whole body (tens of megabytes) alive for as long as any one of its fences.
                    if case .utf8 = fence.featureText { fence.featureText = .string(fence.featureText.string) }
                    c.fences[fence.id] = fence
                case .remove(let id):
                    c.fences[id] = nil
                    for (device, var snapshot) in c.devices where snapshot.memberships.contains(where: { $0.fence == id }) {
                        snapshot.memberships.removeAll { $0.fence == id }
                        c.devices[device] = snapshot
                    }
                case .removeAll:
                    c.fences = [:]
                    for device in c.deviceOrder { c.devices[device]?.memberships = [] }
                }
            }
            if !changes.forgottenDevices.isEmpty {
                let forgotten = Set(changes.forgottenDevices)
                for device in forgotten { c.devices[device] = nil }
                c.deviceOrder.removeAll { forgotten.contains($0) }
            }
            // By position: `for change in changes.devices` copied each change (every reference retained)
            // before the copy of its snapshot that the store keeps.
            for i in changes.devices.indices {
                let device = changes.devices[i].snapshot.device
                let presenceChanged = changes.devices[i].presenceChanged
                // A known device (the usual case) is found once and replaced in place.
                if let index = c.devices.index(forKey: device) {
                    let kept = presenceChanged ? nil : c.devices.values[index].memberships
                    c.devices.values[index] = changes.devices[i].snapshot
                    if let kept { c.devices.values[index].memberships = kept }
                } else {
                    c.deviceOrder.append(device)
                    c.devices[device] = changes.devices[i].snapshot
                    if !presenceChanged { c.devices[device]?.memberships = [] }
                }
            }
            c.events.append(changes.events)
            if let consent = changes.serviceConsent { c.serviceConsent = consent }
            c.deviceConsents.merge(changes.deviceConsents) { $1 }
            if let processed = changes.processedUpdates { c.processedUpdates = processed }
            if let sequence = changes.acceptedSequence { c.acceptedSequence = sequence }
            if let arrivals = changes.arrivals { c.arrivals = arrivals }
        }
    }

    /// - Complexity: O(log n + limit).
    public func events(after sequence: Int64, limit: Int) throws -> [GeofencingEvent] {
        contents.withLock { c in
            // Sequences are 1, 2, 3, … so the index of sequence s is s - 1.
            let start = Int(max(0, min(sequence, Int64(c.events.count))))
            let end = start + min(max(0, limit), c.events.count - start)
            return c.events.events(start..<end)
        }
    }
}

/// The store's event log, kept in the arrays the commits gave it: appending a commit's events retains
/// its array once, where copying them into one array retained every string and dictionary of every
/// event. Small commits are gathered into the last array, so that a log written one event at a time is
/// not one array per event.
struct EventLog {
    /// The events, in order, in chunks.
    private var chunks: [[GeofencingEvent]] = []
    /// `ends[k]`: the number of events in `chunks[0...k]`.
    private var ends: [Int] = []

    /// Commits with fewer events than this go into the last chunk, while it has room.
    private static let smallCommit = 64
    /// The size up to which a chunk takes small commits.
    private static let chunkRoom = 4_096

    /// The number of events.
    var count: Int { ends.last ?? 0 }

    /// Appends `events` (each commit's, in order).
    mutating func append(_ events: [GeofencingEvent]) {
        guard !events.isEmpty else { return }
        if events.count < Self.smallCommit, let last = chunks.indices.last, chunks[last].count < Self.chunkRoom {
            chunks[last].append(contentsOf: events)
            ends[last] += events.count
        } else {
            chunks.append(events)
            ends.append(count + events.count)
        }
    }

    /// The events at positions `range` (0-based), in order.
    /// - Complexity: O(log c + range.count) for c chunks.
    func events(_ range: Range<Int>) -> [GeofencingEvent] {
        guard !range.isEmpty else { return [] }
        var result: [GeofencingEvent] = []
        result.reserveCapacity(range.count)
        // The first chunk that ends after `range.lowerBound`.
        var lo = 0, hi = ends.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if ends[mid] > range.lowerBound { hi = mid } else { lo = mid + 1 }
        }
        var k = lo, position = range.lowerBound
        while position < range.upperBound {
            let chunkStart = ends[k] - chunks[k].count
            let upTo = min(range.upperBound, ends[k])
            result.append(contentsOf: chunks[k][(position - chunkStart)..<(upTo - chunkStart)])
            position = upTo
            k += 1
        }
        return result
    }
}
