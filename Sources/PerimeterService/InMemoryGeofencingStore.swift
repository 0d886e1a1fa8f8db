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
        var devices = DeviceStates()
        var serviceConsent: Bool?
        var deviceConsents: [DeviceID: Bool] = [:]
        var events = EventLog()
        var processedUpdates: UInt64 = 0
        var acceptedSequence: Int64 = 0
        var arrivals: UInt64 = 0
        /// The service whose engine holds the committed state of devices this store's own states do not
        /// have yet (see ``commit(_:by:writingDevices:)``); `nil` when every state is here.
        var owner = OwnerReference()
    }

    /// A weak reference to the lock of the service that owes states: the service holds this store, and
    /// its states are paid when it is dropped (``GeofencingService``'s `deinit`).
    struct OwnerReference {
        weak var lock: ServiceLock<ServiceCore>?
    }

    private let contents = Mutex(Contents())

    /// An empty store.
    public init() {}

    /// - Complexity: O(fences log fences + devices).
    public func load() throws -> StoredState {
        var state = StoredState()
        try withSettledContents { c in
            state.fences = c.fences.values.sorted { $0.position < $1.position }
            state.devices = c.devices.all
            state.serviceConsent = c.serviceConsent
            state.deviceConsents = c.deviceConsents
            state.lastEventSequence = Int64(c.events.count)
            state.processedUpdates = c.processedUpdates
            state.acceptedSequence = c.acceptedSequence
            state.arrivals = c.arrivals
        }
        return state
    }

    /// Applies `changes` atomically (it checks the event sequence before changing anything).
    public func commit(_ changes: StoreChanges) throws {
        try commit(changes, by: nil) { _ in false }
    }

    /// Runs `body` on the contents with every device state in them: when a service owes states (see
    /// ``commit(_:by:writingDevices:)``), under that service's lock, which pays them first
    /// (``ServiceCore/lockTaken()``), so that `body` sees exactly what was last committed even while the
    /// service goes on. `caller`: the lock of the service calling, which holds it (its own debt is left
    /// owed: it may only add to it).
    private func withSettledContents(by caller: ServiceLock<ServiceCore>? = nil,
                                     _ body: (inout Contents) throws(GeofencingError) -> Void) throws(GeofencingError) {
        while true {
            if let owner = contents.withLock({ $0.owner.lock }), owner !== caller {
                // Taking the owner's lock pays what it owes; meanwhile the debt may have passed to
                // another service, and then this goes round again.
                let done = try owner.withLock { (_: inout ServiceCore) throws(GeofencingError) -> Bool in
                    try attempt(settled: owner, caller: caller, body)
                }
                if done { return }
            } else if try attempt(settled: nil, caller: caller, body) {
                return
            }
        }
    }

    /// Runs `body` on the contents unless a service other than `settled` (whose lock is held, so it owes
    /// nothing) and `caller` owes states; returns whether it ran.
    private func attempt(settled: ServiceLock<ServiceCore>?, caller: ServiceLock<ServiceCore>?,
                         _ body: (inout Contents) throws(GeofencingError) -> Void) throws(GeofencingError) -> Bool {
        try contents.withLock { (c: inout Contents) throws(GeofencingError) -> Bool in
            if let owner = c.owner.lock, owner !== settled, owner !== caller { return false }
            if c.owner.lock !== caller { c.owner.lock = nil }
            try body(&c)
            return true
        }
    }

    /// Writes the states a service owed (``ServiceCore/payOwedStates()``) into the store's, and records
    /// that `owner` (the lock of the service paying, which holds it) owes nothing more.
    func payOwedStates(by owner: ServiceLock<ServiceCore>?, _ write: (inout DeviceStates) -> Void) {
        contents.withLock { c in
            write(&c.devices)
            if c.owner.lock === owner { c.owner.lock = nil }
        }
    }

    /// Whether a commit whose first event has sequence `sequence + 1` continues the log (the one way an
    /// in-place commit fails is that it does not).
    func continuesLog(after sequence: Int64) -> Bool {
        contents.withLock { Int64($0.events.count) == sequence }
    }

    /// ``commit(_:)`` with more device states written in place: after `changes`' forgotten devices and
    /// devices are applied, `writeDevices` writes states straight into the store's own, under the
    /// store's lock, before the events are appended. Nothing is changed when the commit fails (the
    /// event sequence is checked first), and `writeDevices` is then not called.
    ///
    /// The service's commit (``ServiceCore/commitInPlace(lazily:)``) has the engine write each changed
    /// device's state here, where the store keeps it, instead of into a ``DeviceChange`` that the store
    /// then copies (and whose old state it releases): the one copy of a device's state that a commit
    /// makes is this store's. `writeDevices` may also leave a stored device's state unwritten, *owed*:
    /// the committing service's engine holds it, unchanged until that service pays it
    /// (``ServiceCore/payOwedStates()``), which it does whenever its lock is taken for anything but a
    /// call that commits what it changes in the same hold. `writeDevices` returns whether it left states
    /// owed; `owner` is then recorded as the service that owes them (the lock of the service committing,
    /// which holds it). Every reader of device states and every other writer first takes that lock,
    /// which pays them (``withSettledContents(by:_:)``).
    func commit(_ changes: StoreChanges, by owner: ServiceLock<ServiceCore>?,
                writingDevices writeDevices: (inout DeviceStates) -> Bool) throws(GeofencingError) {
        try withSettledContents(by: owner) { (c: inout Contents) throws(GeofencingError) in
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
                    c.devices.removeMemberships { $0.fence == id }
                case .removeAll:
                    c.fences = [:]
                    c.devices.removeMemberships { _ in true }
                }
            }
            for device in changes.forgottenDevices { c.devices.remove(device) }
            // By position: `for change in changes.devices` copied each change (every reference retained)
            // before the copy of its snapshot that the store keeps.
            for i in changes.devices.indices {
                let presenceChanged = changes.devices[i].presenceChanged
                // A known device (the usual case) is found once, by the service's number when it gives
                // one, and replaced in place.
                let p = c.devices.position(of: changes.devices[i].snapshot.device, number: changes.devices[i].deviceNumber)
                if p >= 0 {
                    let kept = presenceChanged ? nil : c.devices.states[p].memberships
                    c.devices.states[p] = changes.devices[i].snapshot
                    if let kept { c.devices.states[p].memberships = kept }
                } else {
                    let added = c.devices.append(changes.devices[i].snapshot, number: changes.devices[i].deviceNumber)
                    if !presenceChanged { c.devices.states[added].memberships = [] }
                }
            }
            if writeDevices(&c.devices) { c.owner.lock = owner }
            c.events.append(changes.events)
            if let consent = changes.serviceConsent { c.serviceConsent = consent }
            c.deviceConsents.merge(changes.deviceConsents) { $1 }
            if let processed = changes.processedUpdates { c.processedUpdates = processed }
            if let sequence = changes.acceptedSequence { c.acceptedSequence = sequence }
            if let arrivals = changes.arrivals { c.arrivals = arrivals }
        }
    }

    /// How many times the device states were compacted (``DeviceStates``); for tests.
    var deviceStateCompactions: Int { contents.withLock { $0.devices.compactions } }

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

/// The in-memory store's device states, in the order the devices were first stored (as ``load()`` gives
/// them), found by id or by the committing service's ``DeviceChange/deviceNumber``.
///
/// Kept in a dictionary by id, every commit hashed each changed device's id to find its state (≈ 350
/// instructions for ids like `d123`). Positions here never move while the device is stored, so the
/// store remembers, per device number, the position it last wrote that device at, and finds it there
/// after comparing the id (two words when the change's id is the one stored: the service gives the same
/// string each time).
struct DeviceStates {
    /// The states by position; a removed device's entry is left blank (``isStored`` false) until the
    /// next compaction.
    var states: [DetectionEngine.DeviceSnapshot] = []
    /// Whether the device at each position is stored (not removed).
    private(set) var isStored: [Bool] = []
    /// The position of each stored device.
    private var positions: [DeviceID: Int] = [:]
    /// By device number: the position the device with that number was last written at (-1: none).
    /// A hint: checked against the id at that position.
    private var positionByNumber: [Int] = []
    /// How many times the states were compacted.
    private(set) var compactions = 0

    /// The stored states, in order.
    var all: [DetectionEngine.DeviceSnapshot] {
        states.indices.compactMap { isStored[$0] ? states[$0] : nil }
    }

    /// The position of `device`, or -1 when it is not stored. With a `number` (≥ 0) the position that
    /// number last named is tried first; on a miss the id is looked up and the number remembered.
    @inline(__always)
    mutating func position(of device: DeviceID, number: Int32) -> Int {
        let n = Int(number)
        if n >= 0, n < positionByNumber.count {
            let p = positionByNumber[n]
            if p >= 0, isStored[p], states[p].device == device { return p }
        }
        guard let p = positions[device] else { return -1 }
        remember(p, number: n)
        return p
    }

    /// Stores `state` of a device not stored yet, at the end; returns its position.
    mutating func append(_ state: DetectionEngine.DeviceSnapshot, number: Int32) -> Int {
        let p = states.count
        positions[state.device] = p
        states.append(state)
        isStored.append(true)
        remember(p, number: Int(number))
        return p
    }

    /// Removes `device`'s state, if stored. Compacts when removed entries outnumber stored ones.
    mutating func remove(_ device: DeviceID) {
        guard let p = positions.removeValue(forKey: device) else { return }
        isStored[p] = false
        states[p].memberships = []
        states[p].instantVisits = []
        states[p].options = nil
        states[p].stream = nil
        if states.count - positions.count > max(1_024, positions.count) { compact() }
    }

    /// Removes the memberships `isRemoved` picks from every stored device.
    mutating func removeMemberships(where isRemoved: (DetectionEngine.MembershipSnapshot) -> Bool) {
        for p in states.indices where isStored[p] && states[p].memberships.contains(where: isRemoved) {
            states[p].memberships.removeAll(where: isRemoved)
        }
    }

    /// Remembers position `p` for number `n`. Numbers far beyond the devices stored (a caller's own
    /// numbering, not the service's dense one) are not remembered: the table would grow to them.
    private mutating func remember(_ p: Int, number n: Int) {
        guard n >= 0, n <= 2 * states.count + 1_024 else { return }
        if n >= positionByNumber.count {
            positionByNumber += repeatElement(-1, count: max(n + 1, 2 * positionByNumber.count) - positionByNumber.count)
        }
        positionByNumber[n] = p
    }

    /// Drops the removed entries; positions change, so every number is forgotten.
    private mutating func compact() {
        states = all
        isStored = Array(repeating: true, count: states.count)
        positions = Dictionary(uniqueKeysWithValues: states.enumerated().map { ($1.device, $0) })
        positionByNumber = []
        compactions += 1
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
