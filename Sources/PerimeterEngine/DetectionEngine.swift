import Foundation
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry

/// Turns location updates into entry, dwell and exit events — the default semantics of Perimeter.
///
/// The engine is a synchronous value type: no locks, no I/O, no clock of its own. Time only moves when
/// an update arrives or the caller calls ``advance(to:)``. For every accepted update of a device at
/// time *t* it emits, in this order (docs/semantics.md):
/// 1. **dwell** for every fence the device is inside whose dwell is due (entry time + dwell time ≤ *t*)
///    and has not fired in this visit, at entry time + dwell time, ordered by time then fence id;
/// 2. **exit** for every fence the device was inside that no longer contains the point, at *t*, by fence id;
/// 3. **entry** for every fence that contains the point and the device was not known to be inside, at *t*,
///    by fence id.
///
/// An update older than the device's last accepted update is rejected and changes nothing; equal times
/// are accepted.
///
/// Detection-quality options (accuracy and hysteresis, debounce, crossings, interpolation, initial
/// trigger, repeated dwell and staleness, reorder window, schedules, duplicate suppression) are all off
/// by default and set per engine (``Configuration/options``) or per fence (``Fence/options``); see the
/// "Options" part of docs/semantics.md. With every option off the default path above runs unchanged.
public struct DetectionEngine: Sendable {
    /// Engine-wide settings.
    public struct Configuration: Hashable, Sendable {
        /// Dwell time in seconds for fences that set none; `nil` for no dwell on such fences.
        public var defaultDwellTime: Double?
        /// Detection options for every fence; a fence's own settings win (docs/semantics.md, "Options").
        /// All off by default.
        public var options: DetectionOptions
        /// Seconds each device's updates wait so that late ones can be put in time order; 0: off
        /// (an update older than the device's last is rejected at once).
        public var reorderWindow: Double
        /// Whether an update identical to a recent one of the same device (same time and position)
        /// is absorbed without effect, making re-uploads idempotent; off by default.
        public var deduplicate: Bool

        /// Creates a configuration.
        public init(defaultDwellTime: Double? = nil, options: DetectionOptions = DetectionOptions(),
                    reorderWindow: Double = 0, deduplicate: Bool = false) {
            self.defaultDwellTime = defaultDwellTime
            self.options = options
            self.reorderWindow = reorderWindow.isFinite ? max(0, reorderWindow) : 0
            self.deduplicate = deduplicate
        }

        /// Whether the device-stream front end (reorder window or duplicate suppression) is on.
        var usesStreamOptions: Bool { reorderWindow > 0 || deduplicate }
    }

    /// Counters since the engine was created.
    public struct Statistics: Hashable, Sendable {
        /// Updates that were accepted and evaluated.
        public var acceptedUpdates = 0
        /// Updates that were rejected (out of order or invalid).
        public var rejectedUpdates = 0
        /// Events emitted, by kind.
        public var entries = 0, dwells = 0, exits = 0
        /// Option-only events emitted: crossings and level `inside` events.
        public var crosses = 0, insides = 0
        /// Updates absorbed as duplicates of a recent update (``Configuration/deduplicate``).
        public var duplicateUpdates = 0
    }

    /// The engine's settings.
    public let configuration: Configuration
    /// ``Configuration/usesStreamOptions`` of ``configuration``, kept: every update reads it (computed, it
    /// was a load and compare of the window and a load of the flag, ≈ 6 instructions).
    let usesStreamOptions: Bool
    /// Counters since the engine was created.
    public internal(set) var statistics = Statistics()

    var fences: FenceSet
    var deviceTable = DeviceTable()
    /// Per device slot: its record (48 bytes; what an idle device costs, with its table bucket).
    var devices: [DeviceRecord] = []
    /// The fence lists of the devices inside fences (``DeviceRecord/presence``).
    var presencePool = PresencePool()
    /// The update counts of devices past 2³² − 2 accepted updates, by device slot
    /// (``DeviceRecord/smallUpdateCount``): empty in practice.
    var largeUpdateCounts: [Int32: UInt64] = [:]
    /// The reused buffer of ``takeState(_:)``'s fence list. Empty between updates.
    var insideScratch: [Membership] = []
    /// Instant visits (``DeviceState/instantVisits``) of the few devices that have any, by device slot:
    /// kept beside the records because they are empty almost always, so that an idle device's record
    /// needs no room for them.
    var instantVisits: [Int32: [InstantVisit]] = [:]
    var timers = DwellTimers()
    /// Slots of devices ``forget(_:exitsAt:into:)`` dropped: a ``DeviceHandle`` naming one is stale
    /// (the record keeps its id, and the device may come back in a new slot).
    var forgottenSlots: Set<Int32> = []
    /// The slots of the fences containing the update being evaluated, ascending, written by
    /// ``FenceSet/slots(containing:into:)`` and read in place. Copies of the engine share it until one
    /// queries, which then gets its own (``FenceSet/SlotBuffer`` copies on write).
    var scratch = FenceSet.SlotBuffer(capacity: 64)
    /// The reused buffer of ``evaluateChange(deviceSlot:time:coordinate:into:)``'s new fence list,
    /// written by index: its count is its room (what the largest change needed), not a list's length,
    /// and its entries between updates are left-overs nobody reads.
    var keptScratch: [Membership] = []

    // Option state, kept apart from the default path's (see DetectionEngine+Options.swift).
    /// Whether the general (options) path evaluates updates: some option is on somewhere.
    var usesOptions = false
    /// Extra per-device state of the options path, by device slot.
    var optionStates: [Int32: DeviceOptionsState] = [:]
    /// Reorder buffers and recent update identities, by device slot (stream options only).
    var streamStates: [Int32: DeviceStreamState] = [:]
    /// Wake-ups of the options path.
    var optionTimers = MinHeap<DeviceTimer>()
    /// For fences added after the first update: the accepted-update count at that moment, plus one.
    var fenceAddedAt: [Int32: Int] = [:]
    /// Fences that may report crossings, with their boxes; rebuilt after fence changes.
    var crossingCandidates: [(FenceSet.Slot, [BoundingBox])]?
    /// Arrival counter for reorder buffers.
    var arrivals: UInt64 = 0
    /// Accepted updates of the engines this one was restored from (``EngineState/acceptedSequence``).
    var sequenceBase = 0
    /// Reorder-buffered updates by the time they may be released (time + window), for
    /// ``devicesWithDwellsDue(by:)``; entries of updates already released are skipped.
    var releaseTimers = MinHeap<DeviceTimer>()

    /// The running count of accepted updates across restores: orders fence additions and device updates.
    var acceptedSequence: Int { sequenceBase + statistics.acceptedUpdates }

    /// Creates an engine watching `fences`.
    public init(fences: FenceSet = FenceSet(), configuration: Configuration = Configuration()) {
        self.fences = fences
        self.configuration = configuration
        usesStreamOptions = configuration.usesStreamOptions
        self.fences.prepare()
        if !configuration.options.isOff || self.fences.containsFenceOptions {
            usesOptions = true
        }
    }

    /// Creates an engine watching `fences`; a later fence replaces an earlier one with the same id.
    public init(fences: [Fence], configuration: Configuration = Configuration()) {
        self.init(fences: FenceSet(fences), configuration: configuration)
    }

    // MARK: - Fences

    /// The fence set the engine watches.
    public var fenceSet: FenceSet { fences }

    /// The fence with `id`, if the engine watches one.
    public func fence(id: FenceID) -> Fence? { fences.fence(id: id) }

    /// ``fence(id:)`` on the engine where it lies (an element of an array of engines, see
    /// ``ShardedEngine/fenceInPlace(id:)``): the engine is not changed.
    @inline(__always)
    mutating func fenceInPlace(id: FenceID) -> Fence? { fences.fence(id: id) }

    /// Adds a fence, or replaces the one with the same id.
    ///
    /// A new fence's presence is unknown for every device: a device inside it gets an entry on its next
    /// update. A replaced fence keeps every device's presence (and visit), and is re-evaluated on each
    /// device's next update with its new shape and settings.
    public mutating func upsert(_ fence: Fence) {
        let (slot, replaced) = fences.upsert(fence)
        if !replaced { fenceAddedAt[slot] = acceptedSequence + 1 }
        crossingCandidates = nil
        if !fence.options.isOff { activateOptions() }
        if replaced { rescheduleDwells(inSlot: slot) }
    }

    /// Adds or replaces several fences; the index is rebuilt once, now.
    public mutating func upsert<S: Sequence>(contentsOf newFences: S) where S.Element == Fence {
        for fence in newFences { upsert(fence) }
        prepareIndex()
    }

    /// Rebuilds the fence index now if fences changed since it was built (otherwise the next update
    /// pays for it). Call it after changing fences to keep that cost off the update path.
    ///
    /// - Complexity: O(total vertices) when fences changed, O(1) otherwise.
    public mutating func prepareIndex() { fences.prepare() }

    /// Stops watching the fence with `id`. Presence in it is dropped and no event is emitted.
    /// - Returns: the removed fence, or `nil` when the engine watched no such fence.
    @discardableResult
    public mutating func remove(id: FenceID) -> Fence? {
        crossingCandidates = nil
        return fences.remove(id: id)?.fence
    }

    /// Stops watching every fence (presence dropped, nothing emitted).
    public mutating func removeAllFences() {
        crossingCandidates = nil
        fences.removeAll()
    }

    // MARK: - Updates

    /// Why an update was not accepted.
    public enum Rejection: Error, Hashable, Sendable, CustomStringConvertible {
        /// The update is older than the device's last accepted update.
        case outOfOrder(device: DeviceID, time: Date, lastAccepted: Date)
        /// The coordinate is not a position on Earth (not finite, or latitude beyond ±90).
        case invalidCoordinate(device: DeviceID, coordinate: Coordinate)
        /// The time (seconds since 1970) is outside ``LocationUpdate/acceptedTimes``, or not a number.
        case invalidTime(device: DeviceID, time: Double)

        public var description: String {
            switch self {
            case let .outOfOrder(device, time, last):
                "update of device \(device) at \(RFC3339Text(time)) is older than its last accepted update at \(RFC3339Text(last))"
            case let .invalidCoordinate(device, c):
                "update of device \(device) has an invalid position: latitude \(c.latitude), longitude \(c.longitude)"
            case let .invalidTime(device, time):
                "update of device \(device): \(LocationUpdate.timeProblem(time) ?? "invalid time \(time)")"
            }
        }
    }

    /// Evaluates one update and appends the events it causes to `events`.
    ///
    /// - Returns: `nil` when the update was accepted, else why it was rejected (state unchanged).
    /// - Complexity: a point query on the fence index plus O(k log k) in the number of fences the device
    ///   is inside or near; independent of the number of fences elsewhere.
    @discardableResult
    public mutating func process(_ update: LocationUpdate, into events: inout [GeofenceEvent]) -> Rejection? {
        var handle = DeviceHandle()
        return process(update, handle: &handle, into: &events)
    }

    /// Evaluates one update exactly as ``process(_:into:)`` does, finding the device's state through
    /// `handle` instead of hashing its id: for callers that send many updates of a device and keep one
    /// ``DeviceHandle`` per device (start with `DeviceHandle()`; the engine fills it in and corrects it).
    ///
    /// The handle is checked against the update's device id, so a stale or wrong handle costs a lookup,
    /// never a wrong result; events and rejections are those of ``process(_:into:)`` in every case.
    /// - Returns: `nil` when the update was accepted, else why it was rejected (state unchanged; a
    ///   resolved handle stays resolved).
    /// - Complexity: as ``process(_:into:)``, less the device id's hash and the table probe when the
    ///   handle is right.
    @discardableResult @inline(__always)
    public mutating func process(_ update: LocationUpdate, handle: inout DeviceHandle,
                                 into events: inout [GeofenceEvent]) -> Rejection? {
        // The fields go on as separate arguments: with the update kept whole past the first mutation
        // of `self`, the compiler copied it (its id retained, through the value witness) and destroyed
        // the copy at the end, ≈ 95 instructions per update.
        withUnsafePointer(to: update.device) { device in
            withUnsafeMutablePointer(to: &handle) { handle in
                process(deviceAt: device, time: update.time, coordinate: update.coordinate,
                        accuracy: update.horizontalAccuracy, handle: handle, into: &events)
            }
        }
    }

    /// ``process(_:into:)`` of the update at `update` (an element of a batch), its id read in place.
    /// No handle: the id is resolved (a fresh handle was checked and then filled in for nothing, ≈ 10
    /// instructions per update).
    @inline(__always)
    mutating func process(updateAt update: UnsafePointer<LocationUpdate>, into events: inout [GeofenceEvent]) -> Rejection? {
        process(updateAt: update, handle: nil, into: &events)
    }

    /// ``process(_:handle:into:)`` of the update at `update` (an element of a batch), its id read in place.
    @inline(__always)
    mutating func process(updateAt update: UnsafePointer<LocationUpdate>, handle: inout DeviceHandle,
                          into events: inout [GeofenceEvent]) -> Rejection? {
        withUnsafeMutablePointer(to: &handle) { handle in
            process(updateAt: update, handle: handle, into: &events)
        }
    }

    /// ``process(deviceAt:time:coordinate:accuracy:handle:into:)`` of the update at `update`: its dispatch,
    /// with the fields read again from `update` for the rare path. (Read once before the common call,
    /// they were kept across it: spills and reloads, ≈ 34 instructions per update in the batch loop.)
    @inline(__always)
    mutating func process(updateAt update: UnsafePointer<LocationUpdate>, handle: UnsafeMutablePointer<DeviceHandle>?,
                          into events: inout [GeofenceEvent]) -> Rejection? {
        if !usesStreamOptions, !usesOptions,
           processInOrder(deviceAt: update.pointer(to: \.device)!, time: update.pointee.time,
                          coordinate: update.pointee.coordinate, handle: handle, into: &events) {
            return nil
        }
        return processInFull(deviceAt: update.pointer(to: \.device)!, time: update.pointee.time,
                             coordinate: update.pointee.coordinate, accuracy: update.pointee.horizontalAccuracy,
                             handle: handle, into: &events)
    }

    /// ``process(_:handle:into:)`` on the fields of an update that the engine reads.
    ///
    /// The id is passed by address and read where it is used: passed as a value taken from a batch's
    /// buffer, it was copied for the call (a retain and a release per update: ≈ 10 instructions for an id
    /// stored in its string's value, more for one on the heap). The common path reads its words for the hash
    /// and compares it with the slot's id in place; a rejection, a new device and the stream options copy it.
    /// `handle` is the caller's ``DeviceHandle``, checked and corrected as ``process(_:handle:into:)``
    /// says, or `nil` to resolve the id without one.
    ///
    /// Split in two so that the common update does not pay for the rare ones' frame: on an engine
    /// without options, ``processInOrder(deviceAt:time:coordinate:handle:into:)`` takes every update with
    /// a valid time and an ordinary position that is not out of order, and returns a `Bool` in a
    /// register; everything else — rejections (a `Rejection?` of 40 bytes, built and returned through
    /// memory), the stream and options hand-offs, positions to wrap — is
    /// ``processInFull(deviceAt:time:coordinate:accuracy:handle:into:)``, out of line. An out-of-order
    /// update found by the first is given to the second whole: its work before the rejection (resolving
    /// the device, correcting the handle) is idempotent, so the second repeats it and rejects it exactly
    /// as a single pass would.
    @inline(__always)
    mutating func process(deviceAt device: UnsafePointer<DeviceID>, time: Date, coordinate original: Coordinate,
                          accuracy: Double?, handle: UnsafeMutablePointer<DeviceHandle>?,
                          into events: inout [GeofenceEvent]) -> Rejection? {
        if !usesStreamOptions, !usesOptions,
           processInOrder(deviceAt: device, time: time, coordinate: original, handle: handle, into: &events) {
            return nil
        }
        return processInFull(deviceAt: device, time: time, coordinate: original, accuracy: accuracy,
                             handle: handle, into: &events)
    }

    /// The common part of ``process(deviceAt:time:coordinate:accuracy:handle:into:)``, on an engine without
    /// stream options or per-fence options: returns `false`, having changed nothing, when the time is not
    /// accepted or `coordinate` is not an ordinary position (latitude within ±90°, longitude below 180° in
    /// magnitude: the ones ``normalised(_:)`` returns as they are). Else resolves the device; when the
    /// update is not older than the device's last one, counts it, queries the index, evaluates it and
    /// returns `true`; else returns `false` having changed nothing but the device's resolution (a new
    /// device is never out of order) and `handle`. Out of line with few live values, so that its frame
    /// holds only what the accepted path needs; the checks come first, before anything is kept.
    @inline(never)
    mutating func processInOrder(deviceAt device: UnsafePointer<DeviceID>, time: Date, coordinate: Coordinate,
                                 handle: UnsafeMutablePointer<DeviceHandle>?,
                                 into events: inout [GeofenceEvent]) -> Bool {
        let t = time.timeIntervalSince1970
        guard LocationUpdate.acceptedTimes.contains(t),
              Self.isOrdinary(coordinate) else { return false }
        let deviceSlot = resolve(deviceAt: device, handle: handle)
        // A new device's last time is -infinity: nothing is older.
        guard t >= devices[Int(deviceSlot)].lastTime else { return false }
        statistics.acceptedUpdates += 1
        fences.slots(containing: coordinate, into: &scratch)
        evaluate(deviceSlot: deviceSlot, time: t, coordinate: coordinate, into: &events)
        return true
    }

    /// ``process(deviceAt:time:coordinate:accuracy:handle:into:)`` of any update, in one pass: every check,
    /// the rejections, the stream and options hand-offs. Out of line: the common update goes through
    /// ``processInOrder(deviceAt:time:coordinate:handle:into:)`` instead.
    @inline(never)
    mutating func processInFull(deviceAt device: UnsafePointer<DeviceID>, time: Date, coordinate original: Coordinate,
                                accuracy: Double?, handle: UnsafeMutablePointer<DeviceHandle>?,
                                into events: inout [GeofenceEvent]) -> Rejection? {
        let t = time.timeIntervalSince1970
        guard LocationUpdate.acceptedTimes.contains(t) else {
            statistics.rejectedUpdates += 1
            return .invalidTime(device: device.pointee, time: t)
        }
        guard let coordinate = Self.normalised(original) else {
            statistics.rejectedUpdates += 1
            return .invalidCoordinate(device: device.pointee, coordinate: original)
        }

        let deviceSlot = resolve(deviceAt: device, handle: handle)
        if usesStreamOptions {
            return intake(device.pointee, deviceSlot: deviceSlot, date: time, time: t, coordinate: coordinate,
                          accuracy: accuracy, into: &events)
        }
        // A new device's last time is -infinity: nothing is older.
        let last = devices[Int(deviceSlot)].lastTime
        if t < last {
            statistics.rejectedUpdates += 1
            return .outOfOrder(device: device.pointee, time: time, lastAccepted: Date(timeIntervalSince1970: last))
        }
        statistics.acceptedUpdates += 1
        if usesOptions {
            evaluateWithOptions(deviceSlot: deviceSlot, time: t, coordinate: coordinate, accuracy: accuracy,
                                into: &events)
            return nil
        }

        fences.slots(containing: coordinate, into: &scratch)
        evaluate(deviceSlot: deviceSlot, time: t, coordinate: coordinate, into: &events)
        return nil
    }

    /// Whether `handle` names the live slot of `device`. Compares ids last: when the caller's handle was
    /// filled in from the same id value, that comparison is a compare of two words.
    @inline(__always)
    func holds(_ handle: DeviceHandle, _ device: DeviceID) -> Bool {
        let slot = handle.slot
        guard slot >= 0, Int(slot) < devices.count else { return false }
        if !forgottenSlots.isEmpty, forgottenSlots.contains(slot) { return false }
        return devices[Int(slot)].id == device
    }

    /// ``holds(_:_:)`` of the id at `device`, read only when the handle names a live slot.
    @inline(__always)
    func holds(_ handle: DeviceHandle, deviceAt device: UnsafePointer<DeviceID>) -> Bool {
        let slot = handle.slot
        guard slot >= 0, Int(slot) < devices.count else { return false }
        if !forgottenSlots.isEmpty, forgottenSlots.contains(slot) { return false }
        return devices[Int(slot)].id == device.pointee
    }

    /// The slot of the id at `device`: `handle`'s when it holds that device (``holds(_:deviceAt:)``), else
    /// ``resolve(deviceAt:)``'s, which `handle` (when given) is then set to. Both halves of `process`
    /// resolve a device through it.
    @inline(__always)
    mutating func resolve(deviceAt device: UnsafePointer<DeviceID>, handle: UnsafeMutablePointer<DeviceHandle>?) -> Int32 {
        if let handle, holds(handle.pointee, deviceAt: device) { return handle.pointee.slot }
        let slot = resolve(deviceAt: device)
        handle?.pointee = DeviceHandle(slot: slot)
        return slot
    }

    /// The slot of the id at `device`, which is added when the engine does not know it. (Inlined: its call and
    /// frame were ≈ 20 of its ≈ 130 instructions per update; adding a device stays out of line.)
    ///
    /// A short ASCII id is hashed from its string's words (``DeviceTable/inlineASCIIHash(_:)``); as that
    /// hash is only a first guess, a miss with it is looked up again with ``DeviceTable/hash(_:)``
    /// before the device is added.
    @inline(__always)
    mutating func resolve(deviceAt device: UnsafePointer<DeviceID>) -> Int32 {
        let quick = DeviceTable.inlineASCIIHash(device.pointee)
        let hash = quick ?? DeviceTable.hash(device.pointee)
        if let existing = deviceTable.slot(of: device.pointee, hash: hash, in: devices) { return existing }
        return quick == nil ? addDevice(device.pointee, hash: hash) : resolveMissed(device.pointee)
    }

    /// ``resolve(deviceAt:)`` of a device that its quick hash did not find: looked up with its full hash, and
    /// added when the engine does not know it.
    @inline(never)
    mutating func resolveMissed(_ device: DeviceID) -> Int32 {
        let hash = DeviceTable.hash(device)
        if let existing = deviceTable.slot(of: device, hash: hash, in: devices) { return existing }
        return addDevice(device, hash: hash)
    }

    /// Evaluates one update and returns the events it causes (empty when it was rejected).
    public mutating func process(_ update: LocationUpdate) -> [GeofenceEvent] {
        var events: [GeofenceEvent] = []
        process(update, into: &events)
        return events
    }

    /// Evaluates `updates` in order, exactly as calling ``process(_:into:)`` on each in turn would, and
    /// returns the rejected ones with their positions in `updates` (empty when all were accepted).
    ///
    /// The index is prepared once for the batch. (The index memory of later updates is not read ahead:
    /// without a prefetch instruction such reads hold up the loop as the query's own would, and on a quiet
    /// machine the batch ran slower with them; docs/benchmarks.md, "Session 10 — engine".)
    /// - Complexity: the sum of the updates' costs.
    @discardableResult
    public mutating func process(contentsOf updates: [LocationUpdate], into events: inout [GeofenceEvent])
        -> [(index: Int, rejection: Rejection)] {
        var rejections: [(index: Int, rejection: Rejection)] = []
        fences.prepare()
        // Through a buffer pointer: `updates[i]` made a copy of each update (its id retained, through the
        // value witness) and destroyed it after the call, ≈ 95 instructions per update.
        updates.withUnsafeBufferPointer { updates in
            guard let first = updates.baseAddress else { return }
            for i in updates.indices {
                if let rejection = process(updateAt: first + i, into: &events) { rejections.append((i, rejection)) }
            }
        }
        return rejections
    }

    /// Fires every dwell that falls due by `time` for devices that sent no update since (presence holds
    /// between updates). Events are ordered by time, then device id, then fence id.
    ///
    /// - Complexity: O(d log n) for d dwells due among n pending dwell timers.
    public mutating func advance(to time: Date, into events: inout [GeofenceEvent]) {
        advance(to: time, holding: [], into: &events)
    }

    /// Like ``advance(to:into:)``, but leaves the timers of the `held` devices pending: they fire on a
    /// later call that does not hold them, or on those devices' own updates. This is how a live service
    /// lets a device that is still uploading (a backlog sent in several requests) be evaluated on its own
    /// updates' times, while the clock fires the timers of devices that went quiet.
    ///
    /// - Complexity: O(d log n) for d timers due among n pending, held ones included.
    public mutating func advance(to time: Date, holding held: Set<DeviceID>, into events: inout [GeofenceEvent]) {
        let now = time.timeIntervalSince1970
        guard now.isFinite else { return }
        let heldSlots = Set(held.compactMap { slot(of: $0) })
        if configuration.reorderWindow > 0 {
            releaseBuffered(upTo: now - configuration.reorderWindow, holding: heldSlots, into: &events)
        }
        if usesOptions { return advanceWithOptions(to: now, holding: heldSlots, into: &events) }
        var due: [GeofenceEvent] = []
        var kept: [DwellTimer] = []
        while let timer = timers.popFirst(dueBy: now) {
            if heldSlots.contains(timer.device) { kept.append(timer); continue }
            let deviceIndex = Int(timer.device)
            let list = devices[deviceIndex].presence
            guard let m = (0..<presencePool.count(list)).first(where: { presencePool[list, $0].slot == timer.slot }),
                  presencePool[list, m].visitSequence == timer.visitSequence,
                  !presencePool[list, m].hasDwelled,
                  let fence = fences[slot: timer.slot], let dwell = dwellTime(of: fence)
            else { continue }
            let dueTime = presencePool[list, m].entryTime + dwell
            if dueTime > now {
                kept.append(DwellTimer(due: dueTime, device: timer.device, slot: timer.slot,
                                       visitSequence: timer.visitSequence))
                continue
            }
            presencePool.markDwelled(list, m)
            if fence.events.contains(.dwell), !isExpired(fence, at: dueTime) {
                due.append(makeEvent(.dwell, fence: fence.id, device: devices[deviceIndex].id,
                                     membership: presencePool[list, m], time: dueTime,
                                     coordinate: devices[deviceIndex].lastCoordinate))
            }
        }
        for timer in kept { timers.push(timer) }
        due.sort { ($0.time, $0.device, $0.fence) < ($1.time, $1.device, $1.fence) }
        statistics.dwells += due.count
        events.append(contentsOf: due)
    }

    /// Fires every timer of `device` due by `time` — dwells, and with options its confirmations,
    /// staleness exits, schedules, repeated dwells and reorder releases — as ``advance(to:into:)`` would,
    /// and no other device's. A live service calls it before each of a device's updates, so that a device
    /// is evaluated on its own updates' times exactly as in a replay; a simulated device whose time runs on
    /// its own clock moves this way without moving anyone else.
    ///
    /// - Complexity: O(k log k) for the k fences the device is inside (plus its buffered updates); no
    ///   other device is looked at.
    public mutating func advance(_ device: DeviceID, to time: Date, into events: inout [GeofenceEvent]) {
        let now = time.timeIntervalSince1970
        guard now.isFinite, let slot = slot(of: device) else { return }
        if configuration.reorderWindow > 0 { releaseBuffered(slot, upTo: now - configuration.reorderWindow, into: &events) }
        let d = Int(slot)
        guard devices[d].hasUpdates else { return }
        if usesOptions {
            var state = takeState(d)
            var opt = optionStates.removeValue(forKey: slot) ?? freshOptionState(for: state)
            var list: [KeyedEvent] = []
            runDue(&state, &opt, until: now, only: nil, coordinate: state.lastCoordinate, into: &list)
            store(state, at: d)
            if let scheduled = opt.scheduledDue, scheduled <= now { opt.scheduledDue = nil }  // that timer is spent
            scheduleNext(slot, state: state, opt: &opt)
            optionStates[slot] = opt
            list.sort { ($0.event.time, $0.event.fence, $0.rank) < ($1.event.time, $1.event.fence, $1.rank) }
            events.append(contentsOf: list.map(\.event))
            return
        }
        // Its pending timers stay in the heap; they find the dwell fired and do nothing.
        fireDueDwells(inList: devices[d].presence, ofSlot: d, by: now, coordinate: devices[d].lastCoordinate,
                      into: &events)
    }

    /// Fires every dwell that falls due by `time` and returns the events.
    public mutating func advance(to time: Date) -> [GeofenceEvent] {
        var events: [GeofenceEvent] = []
        advance(to: time, into: &events)
        return events
    }

    // MARK: - State

    /// The fences `device` is inside, ordered by fence id; empty for an unknown device.
    ///
    /// - Parameter time: the moment asked about, when it is later than the device's last update: a live
    ///   service's clock. A fence that expired by then is left out, as the device's next update would
    ///   drop it (expiry has no event, so nothing else needs to fire for it).
    public func presence(of device: DeviceID, at time: Date? = nil) -> [Presence] {
        guard let slot = slot(of: device) else { return [] }
        let state = devices[Int(slot)]
        let asOf = max(state.lastTime, time?.timeIntervalSince1970 ?? -.infinity)
        return presencePool.members(state.presence).compactMap { m -> Presence? in
            guard let fence = fences[slot: m.slot], !isExpired(fence, at: asOf) else { return nil }
            return Presence(fence: fence.id, since: Date(timeIntervalSince1970: m.entryTime),
                            visitID: visitID(device: state.id, fence: fence.id, membership: m),
                            hasDwelled: m.hasDwelled)
        }.sorted { $0.fence < $1.fence }
    }

    /// The time of `device`'s last accepted update, or `nil` when it sent none.
    public func lastUpdateTime(of device: DeviceID) -> Date? {
        guard let slot = slot(of: device), devices[Int(slot)].hasUpdates else { return nil }
        return Date(timeIntervalSince1970: devices[Int(slot)].lastTime)
    }

    /// The devices the engine has seen, in order of their first update (forgotten devices left out).
    public var knownDevices: [DeviceID] { devices.indices.filter { isLive(slot: Int32($0)) }.map { devices[$0].id } }

    /// Whether `slot` holds a device the engine knows (not one ``forget(_:exitsAt:into:)`` dropped).
    func isLive(slot: Int32) -> Bool { self.slot(of: devices[Int(slot)].id) == slot }

    /// The slot of `device`, if the engine knows it.
    func slot(of device: DeviceID) -> Int32? { deviceTable.slot(of: device, in: devices) }

    /// Gives the device, unknown so far, a new slot; `hash` is its ``DeviceTable/hash(_:)``.
    ///
    /// The records' array grows by an eighth (16 records at least), not by doubling: its spare capacity
    /// is then at most an eighth of the records, so that an idle device costs at most 48 × 1.125 + 8 =
    /// 62 bytes with its table share, whatever the number of devices (from a few hundred on).
    /// - Complexity: O(1) amortised (each record is copied about eight times as the array grows).
    mutating func addDevice(_ device: DeviceID, hash: UInt64) -> Int32 {
        let slot = Int32(devices.count)
        if devices.count == devices.capacity { devices.reserveCapacity(Self.grownRecordCount(from: devices.count)) }
        devices.append(DeviceRecord(id: device))
        deviceTable.insert(slot, hash: hash, in: devices)
        return slot
    }

    /// The capacity the records' array grows to from `n` records.
    static func grownRecordCount(from n: Int) -> Int { n + max(16, n / 8) }

    /// Drops everything the engine knows about `device`: presence, pending timers, option state and
    /// updates waiting in its reorder window. Its next update starts it afresh, as a device never seen.
    ///
    /// With `exitsAt` set, first emits an exit with reason ``ExitReason/reset`` at that time (the later of
    /// it and the device's last update time) for every fence the device is inside that reports exits,
    /// ordered by fence id; without it nothing is emitted.
    /// - Returns: whether the engine knew the device.
    /// - Complexity: O(k log k) for the k fences the device is inside.
    @discardableResult
    public mutating func forget(_ device: DeviceID, exitsAt time: Date? = nil, into events: inout [GeofenceEvent]) -> Bool {
        guard let slot = slot(of: device) else { return false }
        let state = devices[Int(slot)]
        if let time, state.hasUpdates {
            let t = max(time.timeIntervalSince1970, state.lastTime)
            var exits: [GeofenceEvent] = []
            for m in presencePool.members(state.presence) {
                let traits = fences.traits(ofSlot: m.slot)
                guard traits.exists, t < traits.expiry, traits.events.contains(.exit),
                      let fence = fences.id(ofSlot: m.slot) else { continue }
                let event = makeEvent(.exit, fence: fence, device: state.id, membership: m, time: t,
                                      coordinate: state.lastCoordinate, timeInside: t - m.entryTime, reason: .reset)
                exits.append(event)
            }
            exits.sort { $0.fence < $1.fence }
            statistics.exits += exits.count
            events.append(contentsOf: exits)
        }
        // The slot stays behind, empty and unreachable: timers that still name it find no membership
        // and no option state, and fire nothing.
        deviceTable.remove(device, in: devices)
        forgottenSlots.insert(slot)
        presencePool.free(&devices[Int(slot)].presence)
        if !largeUpdateCounts.isEmpty { largeUpdateCounts.removeValue(forKey: slot) }
        instantVisits.removeValue(forKey: slot)
        optionStates.removeValue(forKey: slot)
        streamStates.removeValue(forKey: slot)
        return true
    }

    // MARK: - Core

    /// Evaluates an accepted update of the device in `deviceSlot` at `t`, the slots of the fences
    /// containing its position being in ``scratch`` (ascending). `scratch` is read in place rather than
    /// passed: an argument taken from a stored property costs a retain and a release per update.
    ///
    /// The fast path (most updates: the device is inside exactly the fences it was inside, none of which
    /// expired or has a dwell falling due) is inlined into the caller and changes the record in place;
    /// the rest is ``evaluateChange(deviceSlot:time:coordinate:into:)``, out of line, so that its large
    /// frame and spills are not paid by the updates that change nothing.
    @inline(__always)
    mutating func evaluate(deviceSlot: Int32, time t: Double, coordinate: Coordinate,
                           into events: inout [GeofenceEvent]) {
        let d = Int(deviceSlot)
        if isUnchanged(device: d, at: t) {
            finish(slot: d, time: t, coordinate: coordinate)
        } else {
            evaluateChange(deviceSlot: deviceSlot, time: t, coordinate: coordinate, into: &events)
        }
    }

    /// ``evaluate(deviceSlot:time:coordinate:into:)`` of an update that is not unchanged: dwells,
    /// exits and entries, and the device's new fence list.
    ///
    /// The old list is read where it lies in ``presencePool`` (due dwells are marked there, and the merge
    /// reads it in place); only the new list is written, into ``keptScratch`` and then into the pool. The
    /// device's record is changed in place. (Taking the device's state out as a ``DeviceState`` and
    /// storing it back — the list copied into an array, the reused arrays cleared, the state destroyed —
    /// cost ≈ 400 instructions of every changed update.)
    @inline(never)
    mutating func evaluateChange(deviceSlot: Int32, time t: Double, coordinate: Coordinate,
                                 into events: inout [GeofenceEvent]) {
        let d = Int(deviceSlot)
        let list = devices[d].presence
        let oldCount = presencePool.count(list)
        let newCount = scratch.count
        // The device's accepted updates before this one: the sequence of the visits it begins now.
        let sequence = updateCount(ofSlot: d)
        var visits: [InstantVisit] = []
        if !instantVisits.isEmpty, let taken = instantVisits.removeValue(forKey: deviceSlot) {
            visits = taken
            visits.removeAll { $0.entryTime < t }  // no visit begins before t
        }

        // 1. Dwells due by t, ordered by time then fence id. None can be due when no fence sets a dwell
        // time and the engine has no default: the call (≈ 135) is skipped.
        if oldCount > 0, configuration.defaultDwellTime != nil || fences.containsDwellTimes {
            fireDueDwells(inList: list, ofSlot: d, by: t, coordinate: coordinate, into: &events)
        }

        // 2 and 3. Merge the old and new (ascending) slot lists. Exits and entries go straight to
        // `events`, in slot order, and are put in order below; the new list is written into a reused
        // buffer of at least `oldCount + newCount` entries, by index: no allocation once it is warm, and
        // nothing to clear afterwards (the entries past the new list are never read).
        var kept = keptScratch
        keptScratch = []  // moved out, so the buffer stays uniquely referenced
        if kept.count < oldCount + newCount {
            kept.append(contentsOf: repeatElement(Membership(slot: 0, entryTime: 0, visitSequence: 0, ordinal: 0),
                                                  count: oldCount + newCount - kept.count))
        }
        let exitStart = events.count
        let keptCount = kept.withUnsafeMutableBufferPointer { kept in
            var n = 0, i = 0, j = 0
            while i < oldCount || j < newCount {
                let old = i < oldCount ? presencePool[list, i].slot : .max
                let new = j < newCount ? scratch[j] : .max
                if old == new {
                    if fences.isActive(slot: old, at: t) {
                        kept[n] = presencePool[list, i]
                        n += 1
                    }
                    i += 1; j += 1
                } else if old < new {
                    let m = presencePool[list, i]
                    i += 1
                    // Removed or expired fences drop their presence silently.
                    let traits = fences.traits(ofSlot: m.slot)
                    guard traits.exists, t < traits.expiry else { continue }
                    if m.entryTime == t { visits.noteInstantVisit(m, keepingFrom: t) }
                    if traits.events.contains(.exit), let fence = fences.id(ofSlot: m.slot) {
                        statistics.exits += 1
                        // Made whole in the call: an event set after it was a copy and a destroy (≈ 210).
                        events.append(makeEvent(.exit, fence: fence, device: devices[d].id, membership: m, time: t,
                                                coordinate: coordinate, timeInside: t - m.entryTime))
                    }
                } else {
                    j += 1
                    let traits = fences.traits(ofSlot: new)
                    guard traits.exists, t < traits.expiry else { continue }
                    let m = Membership(slot: new, entryTime: t, visitSequence: sequence,
                                       ordinal: visits.ordinal(ofVisitTo: new, at: t))
                    kept[n] = m
                    n += 1
                    if let dwell = traits.dwellTime(or: configuration.defaultDwellTime) {
                        timers.push(DwellTimer(due: t + dwell, device: deviceSlot, slot: new,
                                               visitSequence: m.visitSequence))
                    }
                    if traits.events.contains(.entry), let fence = fences.id(ofSlot: new) {
                        statistics.entries += 1
                        events.append(makeEvent(.entry, fence: fence, device: devices[d].id, membership: m, time: t,
                                                coordinate: coordinate))
                    }
                }
            }
            return n
        }
        // Exits by fence id, then entries by fence id. No two have the same kind and fence (each slot
        // is met once, and a fence has one slot), so the unstable sort's order is the only one.
        if events.count - exitStart > 1 {
            Self.sortEvents(&events, from: exitStart) { a, b in
                (a.kind == .entry) == (b.kind == .entry) ? a.fence < b.fence : b.kind == .entry
            }
        }

        kept.withUnsafeBufferPointer { kept in
            presencePool.replace(&devices[d].presence, with: UnsafeBufferPointer(rebasing: kept[..<keptCount]))
        }
        keptScratch = kept
        if !visits.isEmpty { instantVisits[deviceSlot] = visits }
        finish(slot: d, time: t, coordinate: coordinate)
    }

    /// Whether an update at `t` inside exactly the slots in ``scratch`` changes nothing for device `d`
    /// but its last time and position: same slots as before, all active at `t`, no dwell due by `t`.
    /// (Reads the stored properties directly: a helper taking `self` whole made the compiler copy the
    /// engine on every update.)
    ///
    /// Inside nothing before and after (most devices): two counts compared. Inside k fences: one pass
    /// over the device's block in the pool, the query's slots and the fences' traits, read in place
    /// (each index is checked once, against its buffer, before the loop or at the read).
    @inline(__always)
    private mutating func isUnchanged(device d: Int, at t: Double) -> Bool {
        let list = devices[d].presence
        let count = presencePool.count(list)
        guard count == scratch.count else { return false }
        guard count > 0 else { return true }
        // A fence that sets no dwell, with no engine default, is never due: +infinity. With no dwell time
        // anywhere none is due, and the test is skipped (≈ 10 instructions per membership).
        let defaultDwell = configuration.defaultDwellTime ?? .infinity
        let dwells = configuration.defaultDwellTime != nil || fences.containsDwellTimes
        return presencePool.withMembers(of: list) { members in
            scratch.withUnsafeBufferPointer { slots in
                fences.withUnsafeTraits { traits in
                    for i in 0..<count {
                        let m = members[i]
                        guard m.slot == slots[i], UInt(bitPattern: Int(m.slot)) < UInt(traits.count) else { return false }
                        let fence = traits[Int(m.slot)]
                        guard fence.exists, t < fence.expiry else { return false }
                        if dwells, !m.hasDwelled, m.entryTime + fence.dwellTime(or: defaultDwell) <= t { return false }
                    }
                    return true
                }
            }
        }
    }

    /// Appends the dwells due by `t` of device `d`, whose fence list is `list`, (time order, then fence
    /// id) and marks them fired in the pool.
    private mutating func fireDueDwells(inList list: PresencePool.List, ofSlot d: Int, by t: Double,
                                        coordinate: Coordinate, into events: inout [GeofenceEvent]) {
        let start = events.count
        for i in 0..<presencePool.count(list) where !presencePool[list, i].hasDwelled {
            var m = presencePool[list, i]
            let traits = fences.traits(ofSlot: m.slot)
            guard traits.exists, let dwell = traits.dwellTime(or: configuration.defaultDwellTime) else { continue }
            let due = m.entryTime + dwell
            guard due <= t else { continue }
            presencePool.markDwelled(list, i)
            m.hasDwelled = true
            if traits.events.contains(.dwell), due < traits.expiry, let fence = fences.id(ofSlot: m.slot) {
                events.append(makeEvent(.dwell, fence: fence, device: devices[d].id, membership: m,
                                        time: due, coordinate: coordinate))
            }
        }
        let count = events.count - start
        guard count > 0 else { return }
        if count > 1 { Self.sortEvents(&events, from: start) { ($0.time, $0.fence) < ($1.time, $1.fence) } }
        statistics.dwells += count
    }

    /// Sorts `events[start...]` by `precedes`, a strict total order on them (no two events the same).
    ///
    /// An update's events are few (two in the full workload's sorts, almost always): they are put in
    /// order by insertion, swapping in place. `events[start...].sort` cost ≈ 2,400 instructions for two
    /// events — the slice taken out of the array and written back, the generic sort's set-up.
    @inline(__always)
    static func sortEvents(_ events: inout [GeofenceEvent], from start: Int,
                           by precedes: (GeofenceEvent, GeofenceEvent) -> Bool) {
        guard events.count - start <= 8 else { return events[start...].sort(by: precedes) }
        var i = start + 1
        while i < events.count {
            var j = i
            while j > start, precedes(events[j], events[j - 1]) {
                events.swapAt(j, j - 1)
                j -= 1
            }
            i += 1
        }
    }

    func dwellTime(of fence: Fence) -> Double? {
        fence.dwellTime ?? configuration.defaultDwellTime
    }

    func isExpired(_ fence: Fence, at t: Double) -> Bool {
        guard let expiry = fence.expiresAt else { return false }
        return t >= expiry.timeIntervalSince1970
    }

    /// Pushes fresh dwell timers for every device inside `slot` (its dwell time may have changed).
    private mutating func rescheduleDwells(inSlot slot: FenceSet.Slot) {
        guard let fence = fences[slot: slot], let dwell = dwellTime(of: fence) else { return }
        for d in devices.indices {
            for m in presencePool.members(devices[d].presence) where m.slot == slot && !m.hasDwelled {
                timers.push(DwellTimer(due: m.entryTime + dwell, device: Int32(d), slot: slot,
                                       visitSequence: m.visitSequence))
            }
        }
    }

    /// The id of a visit: what the visit is — device, fence, entry time and which visit of that fence
    /// beginning at that instant it is — so re-posting or replaying updates gives the same ids
    /// (docs/semantics.md, "Event and visit ids"). Made as an event of the visit makes its visit id
    /// (``EventIDInputs``; the visit's hash does not read the event's time), legacy visits included.
    func visitID(device: DeviceID, fence: FenceID, membership m: Membership) -> String {
        EventIDInputs(membership: m, time: m.entryTime, extra: nil).visitHash(device: device, fence: fence).hex
    }

    /// An event of the visit `m`. Its id hashes the visit id, the kind and the event time, plus `extra`
    /// where one visit has several events of a kind: the repeat number of a repeated dwell, the number
    /// of a level event among the device's updates at one instant. The hashes are made when the ids are
    /// read (``EventIdentity``).
    @inline(__always)
    func makeEvent(_ kind: GeofenceEventKind, fence: FenceID, device: DeviceID, membership m: Membership,
                   time: Double, coordinate: Coordinate, timeInside: Double? = nil, observedAt: Double? = nil,
                   reason: ExitReason = .left, extra: UInt64? = nil) -> GeofenceEvent {
        GeofenceEvent(identity: .derived(EventIDInputs(membership: m, time: time, extra: extra)), kind: kind,
                      fence: fence, device: device, time: Date(timeIntervalSince1970: time), coordinate: coordinate,
                      timeInside: timeInside, observedAt: observedAt.map(Date.init(timeIntervalSince1970:)),
                      reason: reason, fenceSlot: m.slot)
    }

    /// Whether `c` is a position ``normalised(_:)`` returns as it is: latitude within ±90°, longitude
    /// below 180° in magnitude (false for NaN).
    @inline(__always)
    static func isOrdinary(_ c: Coordinate) -> Bool { abs(c.latitude) <= 90 && abs(c.longitude) < 180 }

    /// `c` with its longitude wrapped into [−180°, 180°) (180° itself is −180°), or `nil` when it is no
    /// position on Earth.
    @inline(__always)
    private static func normalised(_ c: Coordinate) -> Coordinate? {
        // Most positions need nothing (NaN fails both comparisons): no call for them.
        if isOrdinary(c) { return c }
        return normalisedOutlying(c)
    }

    /// ``normalised(_:)`` of a position outside the common case (a longitude of ±180° or beyond, or no
    /// position at all).
    private static func normalisedOutlying(_ c: Coordinate) -> Coordinate? {
        guard c.latitude.isFinite, c.longitude.isFinite, abs(c.latitude) <= 90 else { return nil }
        var lon = c.longitude
        if abs(lon) > 180 {
            lon = lon.truncatingRemainder(dividingBy: 360)
            if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        }
        if lon == 180 { lon = -180 }
        return Coordinate(latitude: c.latitude, longitude: lon)
    }
}

// MARK: - Per-device state

extension DetectionEngine {
    /// Device `d`'s record with its fence list and instant visits, to be edited and given back with
    /// ``store(_:at:)``. The list is copied into the engine's reused buffer (no allocation once warm).
    @inline(__always)
    mutating func takeState(_ d: Int) -> DeviceState {
        let visits = instantVisits.isEmpty ? [] : instantVisits.removeValue(forKey: Int32(d)) ?? []
        var inside = insideScratch
        insideScratch = []  // moved out, so the buffer stays uniquely referenced
        inside.removeAll(keepingCapacity: true)
        presencePool.append(devices[d].presence, to: &inside)
        return DeviceState(devices[d], updateCount: updateCount(ofSlot: d), inside: inside, instantVisits: visits)
    }

    /// Puts back a state taken with ``takeState(_:)``; its list's buffer is kept for the next one.
    @inline(__always)
    mutating func store(_ state: consuming DeviceState, at d: Int) {
        devices[d].lastTime = state.record.lastTime
        devices[d].lastCoordinate = state.record.lastCoordinate
        setUpdateCount(state.updateCount, ofSlot: d)
        presencePool.replace(&devices[d].presence, with: state.inside)
        if !state.instantVisits.isEmpty { instantVisits[Int32(d)] = state.instantVisits }
        insideScratch = state.inside
    }

    /// Device `d`'s record with its fence list and instant visits, to read.
    func state(ofSlot d: Int) -> DeviceState {
        DeviceState(devices[d], updateCount: updateCount(ofSlot: d), inside: presencePool.members(devices[d].presence),
                    instantVisits: instantVisits.isEmpty ? [] : instantVisits[Int32(d)] ?? [])
    }

    /// Device `d`'s number of accepted updates.
    @inline(__always)
    func updateCount(ofSlot d: Int) -> UInt64 {
        let small = devices[d].smallUpdateCount
        return small != DeviceRecord.countElsewhere ? UInt64(small) : largeUpdateCounts[Int32(d)] ?? 0
    }

    /// Sets device `d`'s number of accepted updates. (The common case inline: its call was ≈ 42
    /// instructions of every changed update.)
    @inline(__always)
    mutating func setUpdateCount(_ count: UInt64, ofSlot d: Int) {
        if count < UInt64(DeviceRecord.countElsewhere), largeUpdateCounts.isEmpty {
            devices[d].smallUpdateCount = UInt32(count)
        } else {
            setUpdateCountElsewhere(count, ofSlot: d)
        }
    }

    /// ``setUpdateCount(_:ofSlot:)`` when `count` is past 2³² − 2 or some device's count is kept in
    /// ``largeUpdateCounts``.
    @inline(never)
    mutating func setUpdateCountElsewhere(_ count: UInt64, ofSlot d: Int) {
        if count < UInt64(DeviceRecord.countElsewhere) {
            devices[d].smallUpdateCount = UInt32(count)
            if !largeUpdateCounts.isEmpty { largeUpdateCounts.removeValue(forKey: Int32(d)) }
        } else {
            devices[d].smallUpdateCount = DeviceRecord.countElsewhere
            largeUpdateCounts[Int32(d)] = count
        }
    }

    /// Records an accepted update of device `d` at `t` in `c` that changed nothing else, in place.
    @inline(__always)
    mutating func finish(slot d: Int, time t: Double, coordinate c: Coordinate) {
        devices[d].lastTime = t
        devices[d].lastCoordinate = c
        if devices[d].smallUpdateCount < DeviceRecord.countElsewhere - 1 {
            devices[d].smallUpdateCount += 1
        } else {
            setUpdateCountElsewhere(updateCount(ofSlot: d) &+ 1, ofSlot: d)  // out of line: rare
        }
    }
}

/// What the engine keeps per device slot: 48 bytes, plus a block in ``PresencePool`` when the device is
/// inside fences (and, beside it, its instant visits when it has any). Idle devices are the many:
/// `DeviceMemoryTests` pins this size with the device table's share (at most 64 bytes together).
struct DeviceRecord: Sendable {
    var id: DeviceID
    var lastTime: Double = -.infinity
    var lastCoordinate = Coordinate(latitude: 0, longitude: 0)
    /// The number of accepted updates while it is below `UInt32.max`; `UInt32.max`: the count is in
    /// ``DetectionEngine/largeUpdateCounts`` (a device past 2³² − 2 updates). 32 bits so that the record
    /// is 48 bytes; read it through ``DetectionEngine/updateCount(ofSlot:)``.
    var smallUpdateCount: UInt32 = 0
    /// Fences the device is inside, ascending by slot: a list in the engine's ``PresencePool``.
    var presence: PresencePool.List = 0

    init(id: DeviceID) { self.id = id }

    /// The marker of a count kept in ``DetectionEngine/largeUpdateCounts``.
    static let countElsewhere = UInt32.max

    /// Whether the device has accepted updates.
    var hasUpdates: Bool { smallUpdateCount != 0 }
}

/// One device's presence while the options path (an update or a timer) edits it, or a snapshot reads it:
/// its record, its update count, its fence list as an array and its instant visits. The default path
/// edits the record and the pool in place instead (``DetectionEngine/evaluateChange(deviceSlot:time:coordinate:into:)``).
struct DeviceState: Sendable {
    /// The id, last time and position (its count and list fields are not read while the state is taken).
    var record: DeviceRecord
    /// Number of accepted updates (tells a visit's dwell timers and repeat counts from another's).
    var updateCount: UInt64
    /// Fences the device is inside, ascending by slot.
    var inside: [Membership]
    /// Visits (and crossings) that began and ended at one instant, the latest per fence: a visit of that
    /// fence beginning again at that instant is numbered after it. Empty almost always (it takes
    /// several updates with equal times), so the common path neither reads nor allocates it.
    var instantVisits: [InstantVisit]

    init(_ record: DeviceRecord, updateCount: UInt64, inside: [Membership], instantVisits: [InstantVisit] = []) {
        self.record = record
        self.updateCount = updateCount
        self.inside = inside
        self.instantVisits = instantVisits
    }

    init(id: DeviceID) { self.init(DeviceRecord(id: id), updateCount: 0, inside: []) }

    var id: DeviceID { record.id }
    var lastTime: Double {
        get { record.lastTime }
        set { record.lastTime = newValue }
    }
    var lastCoordinate: Coordinate {
        get { record.lastCoordinate }
        set { record.lastCoordinate = newValue }
    }

    /// Which visit of the fence in `slot` beginning at `time` a visit beginning now is (the
    /// `ordinal(ofVisitTo:at:)` of its instant visits).
    @inline(__always)
    func ordinal(ofVisitTo slot: FenceSet.Slot, at time: Double) -> UInt32 {
        instantVisits.ordinal(ofVisitTo: slot, at: time)
    }

    /// Remembers that the visit `m` ended at its entry time (the `noteInstantVisit(_:keepingFrom:)` of its
    /// instant visits).
    mutating func noteInstantVisit(_ m: Membership, keepingFrom threshold: Double) {
        instantVisits.noteInstantVisit(m, keepingFrom: threshold)
    }

    @inline(__always)
    mutating func finish(time: Double, coordinate: Coordinate) {
        record.lastTime = time
        record.lastCoordinate = coordinate
        updateCount &+= 1
    }
}

/// That a device is inside the fence in `slot`: 24 bytes (the flags share a word with the sequence).
struct Membership: Sendable, Equatable {
    var slot: FenceSet.Slot
    /// Which visit of this fence beginning at `entryTime` this is (0: the first); part of the visit id.
    var ordinal: UInt32
    var entryTime: Double
    /// The sequence in the low 62 bits, `hasDwelled` in bit 63, `hasLegacyID` in bit 62.
    private var bits: UInt64

    private static let dwelledBit: UInt64 = 1 << 63
    private static let legacyBit: UInt64 = 1 << 62

    /// The device's accepted-update count at entry: tells this visit's dwell timers and repeat counts
    /// from those of an earlier visit of the same fence. Not part of the visit id (it depends on
    /// history: a repeated update changes it).
    var visitSequence: UInt64 { bits & (Self.legacyBit - 1) }

    /// Whether the visit's dwell has fallen due (fired, or passed silently).
    var hasDwelled: Bool {
        get { bits & Self.dwelledBit != 0 }
        set { bits = newValue ? bits | Self.dwelledBit : bits & ~Self.dwelledBit }
    }

    /// Whether the visit was restored from a store written before ordinals: its id is derived from
    /// ``visitSequence``, as its entry's was.
    var hasLegacyID: Bool { bits & Self.legacyBit != 0 }

    init(slot: FenceSet.Slot, entryTime: Double, visitSequence: UInt64, ordinal: UInt32, hasLegacyID: Bool = false) {
        self.slot = slot
        self.ordinal = ordinal
        self.entryTime = entryTime
        bits = (visitSequence & (Self.legacyBit - 1)) | (hasLegacyID ? Self.legacyBit : 0)
    }
}

/// A visit (or crossing) of the fence in `slot` that began and ended at `entryTime`.
struct InstantVisit: Sendable, Hashable {
    var slot: FenceSet.Slot
    var ordinal: UInt32
    var entryTime: Double
}

extension [InstantVisit] {
    /// Which visit of the fence in `slot` beginning at `time` a visit beginning now is: 0 for the
    /// first, one more than the latest (in these instant visits of a device) that began and ended at
    /// that instant.
    @inline(__always)
    func ordinal(ofVisitTo slot: FenceSet.Slot, at time: Double) -> UInt32 {
        guard !isEmpty else { return 0 }
        return ordinalAfterInstantVisits(slot: slot, at: time)
    }

    private func ordinalAfterInstantVisits(slot: FenceSet.Slot, at time: Double) -> UInt32 {
        for visit in self where visit.slot == slot && visit.entryTime == time {
            return visit.ordinal == .max ? .max : visit.ordinal + 1
        }
        return 0
    }

    /// Remembers that the visit `m` ended at its entry time, forgetting visits that began before
    /// `threshold` (no visit can begin that early any more).
    mutating func noteInstantVisit(_ m: Membership, keepingFrom threshold: Double) {
        removeAll { $0.slot == m.slot || $0.entryTime < threshold }
        append(InstantVisit(slot: m.slot, ordinal: m.ordinal, entryTime: m.entryTime))
    }
}

private func RFC3339Text(_ date: Date) -> String { RFC3339.string(from: date) }
