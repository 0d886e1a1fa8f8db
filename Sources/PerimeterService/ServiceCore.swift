import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON

/// Changes made in memory and not yet committed to the store.
struct PendingChanges {
    /// Tells the devices these changes list (``DeviceBooks/pendingMarks``): unique to this value.
    var mark: UInt64
    var fences: [FenceChange] = []
    /// The touched devices, by ``DeviceBooks`` number, in order of first touch (store order stays
    /// deterministic without sorting); each listed once (its entry's mark is ``mark``).
    var touched: [Int32] = []
    /// The events logged since the last commit, in the arrays the calls returned (``PendingEvents``).
    var events = PendingEvents()
    /// Devices forgotten since the last commit, in order (a device forgotten twice is listed once).
    var forgotten: [DeviceID] = []
    var serviceConsent: Bool?
    var deviceConsents: [DeviceID: Bool] = [:]
    var processedUpdatesChanged = false
    /// Updates consumed since the last commit (for group commit).
    var updates = 0

    init(mark: UInt64) { self.mark = mark }

    /// Adds `later` (changes made after these) behind these, except its touched devices
    /// (``ServiceCore/failed(_:)`` merges those: their marks are in the books).
    mutating func append(_ later: PendingChanges) {
        fences += later.fences
        events.append(later.events)
        for device in later.forgotten where !forgotten.contains(device) { forgotten.append(device) }
        if let consent = later.serviceConsent { serviceConsent = consent }
        deviceConsents.merge(later.deviceConsents) { _, newer in newer }
        processedUpdatesChanged = processedUpdatesChanged || later.processedUpdatesChanged
        updates += later.updates
    }

    var isEmpty: Bool {
        fences.isEmpty && touched.isEmpty && forgotten.isEmpty && events.isEmpty && serviceConsent == nil
            && deviceConsents.isEmpty && !processedUpdatesChanged
    }
}

/// The events logged since the last commit, kept in the arrays that ``ServiceCore/log(_:into:)`` built
/// them in (each call's result): a call's events are built once and shared, where a log of its own copied
/// each event (every string and dictionary in it retained, and released after the commit).
struct PendingEvents {
    /// The arrays, in log order; none is empty.
    private(set) var chunks: [[GeofencingEvent]] = []

    /// Whether no event is pending.
    var isEmpty: Bool { chunks.isEmpty }

    /// Appends `events` (logged after those held).
    mutating func append(_ events: [GeofencingEvent]) {
        guard !events.isEmpty else { return }
        chunks.append(events)
    }

    /// Appends `later`'s events (logged after those held).
    mutating func append(_ later: PendingEvents) {
        chunks += later.chunks
    }

    /// Every pending event, in log order: the one array itself when there is one (a commit after each
    /// call), else the arrays joined.
    func joined() -> [GeofencingEvent] {
        if chunks.count == 1 { return chunks[0] }
        var all: [GeofencingEvent] = []
        all.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks { all += chunk }
        return all
    }
}

/// Everything the service guards with its lock: the synchronous engine and the bookkeeping around it.
struct ServiceCore {
    var options: GeofencingOptions?
    /// The engine. Change its fences only through ``upsertFence(_:)``, ``removeFence(id:)`` and
    /// ``removeAllFences()`` (and replace it only in ``rebuild(options:order:devices:engineState:)``):
    /// they keep ``fenceLabels`` true.
    var engine = ShardedEngine()
    /// What logged events carry of their fences, by the engine's fence slot; emptied whenever the
    /// engine's fences change.
    var fenceLabels = FenceLabels()
    var features: [FenceID: GeoJSON.Feature] = [:]
    var positions: [FenceID: Int64] = [:]
    var nextPosition: Int64 = 1
    var serviceConsent = true
    var deviceConsents: [DeviceID: Bool] = [:]
    var lastSequence: Int64 = 0
    var processedUpdates: UInt64 = 0
    /// Per device: presence as last committed (to write presence only when it changed), whether the
    /// pending changes list it, its engine handle.
    var books = DeviceBooks()
    /// With one engine shard: the ``books`` number of the device in each slot of the engine (-1: not
    /// known yet), so that a batch's changed devices are found without hashing their ids. Valid for
    /// this engine only (a rebuild empties it); slots are never reused, not even after a forget.
    var booksBySlot: [Int32] = []
    /// Which engine the stamps in ``books`` come from: a rebuild numbers fences anew.
    var engineGeneration: UInt64 = 0
    /// The engine's counters as last committed (or loaded).
    var committedAcceptedSequence: Int64 = 0
    var committedArrivals: UInt64 = 0
    /// Store transactions committed since the core was made (a configure or close makes a new one).
    var commits: UInt64 = 0
    var pending = PendingChanges(mark: 1)
    /// The device entries of the last stored commit, handed back by ``committed(_:)`` for
    /// ``takeChanges()`` to write the next commit's devices over: every field of an entry is written
    /// again, so making the entries anew (a blank change copied into each, ≈ 150 instructions) and
    /// destroying them after each commit is saved.
    var spareDeviceChanges: [DeviceChange] = []
    /// The ``PendingChanges/mark`` of the next pending changes.
    var nextPendingMark: UInt64 = 2
    /// The batch that changes made now belong to (see ``GroupCommit``); it only grows, also across
    /// `close` and `configure`.
    var batch: UInt64 = 0
    var observers: [any GeofencingObserver] = []
    var streams: [Int: AsyncStream<GeofencingEvent>.Continuation] = [:]
    var nextStreamID = 0
    /// Called with each call's newly logged events, in log order, under the lock (see
    /// ``GeofencingService/setEventSink(_:)``).
    var sink: (@Sendable ([GeofencingEvent]) -> Void)?
    /// Whether ``sink`` hears events once they are committed rather than when they are logged.
    var sinkWhenStored = false
    /// Whether the store reads the ids of the events it commits: every store but the
    /// ``InMemoryGeofencingStore``, which keeps the events as they are (see ``log(_:into:)``). Set when
    /// the store is loaded (``GeofencingService/configure(_:)``).
    var storeReadsEventIDs = true
    /// The in-memory store when the service commits to one (its commits are made in place, under the
    /// lock: ``commitInPlace(lazily:)``), with the lock of the service; set when the store is loaded.
    var inPlace: InPlaceStore?
    /// The ``books`` numbers of the devices whose committed state the in-memory store has not been given
    /// yet: the engine holds it, unchanged since the commit, until ``payOwedStates()`` writes it there.
    var owedStates: [Int32] = []
    /// By ``books`` number: whether the device is in ``owedStates``.
    var isOwed: [Bool] = []
    /// Live time, per device: the service's clock (seconds since 1970) when its last update arrived, for
    /// the devices heard from within the allowed lateness (older entries are pruned; docs/semantics.md).
    var lastArrivals: [DeviceID: Double] = [:]
    /// When `lastArrivals` was last pruned.
    var lastArrivalsPruned = -Double.infinity
    /// Live time, per device: the latest event time the service's clock fired for it without a fix, while
    /// it is later than the device's last update. An update dated before it is evaluated at it.
    var timerFloors: [DeviceID: Double] = [:]
    /// Live calls made (``PendingChanges/arrive(_:call:)`` numbers them from 1).
    var liveCalls: UInt64 = 0
    /// Live-time counters.
    var timeStatistics = GeofencingService.TimeStatistics()
    /// With a ``DetectionRelay``: what the relayed updates and logged events say of each device.
    var relayedDevices: [DeviceID: RelayedDevice] = [:]
    /// With a ``DetectionRelay``: the relay's position of the consent change last applied, per device
    /// (`nil`: service-wide), so that an older change arriving late does not undo a newer one.
    var consentPositions: [DeviceID?: UInt64] = [:]

    /// The options, or `notConfigured`.
    func configured() throws(GeofencingError) -> GeofencingOptions {
        guard let options else { throw .notConfigured }
        return options
    }

    // MARK: - Touched devices

    /// Lists `device` in the pending changes (once).
    mutating func touch(_ device: DeviceID) {
        touch(number: books.number(of: device))
    }

    /// Lists every device of `devices` in the pending changes (each once).
    mutating func touch(_ devices: [DeviceID]) {
        pending.touched.reserveCapacity(pending.touched.count + devices.count)
        for device in devices { touch(device) }
    }

    /// ``touch(_:)-([DeviceID])`` with the engine's slots of the devices beside them
    /// (``DetectionEngine/DataClockOutput/changedDeviceSlots``; -1: not at hand, and then the id is
    /// looked up; with another count than `devices`', all are).
    mutating func touch(_ devices: [DeviceID], slots: [Int32]) {
        guard slots.count == devices.count, engine.shardCount == 1 else { return touch(devices) }
        pending.touched.reserveCapacity(pending.touched.count + devices.count)
        for k in devices.indices {
            let slot = Int(slots[k])
            guard slot >= 0 else {
                touch(devices[k])
                continue
            }
            if slot < booksBySlot.count, booksBySlot[slot] >= 0 {
                touch(number: booksBySlot[slot])
                continue
            }
            let number = books.number(of: devices[k])
            if slot >= booksBySlot.count { booksBySlot += repeatElement(-1, count: slot - booksBySlot.count + 1) }
            booksBySlot[slot] = number
            touch(number: number)
        }
    }

    /// Touches `device` for an update of live call `call` that the engine accepted.
    /// - Returns: whether `call` had not recorded an arrival of the device yet (record it once per call).
    mutating func arrive(_ device: DeviceID, call: UInt64) -> Bool {
        let number = books.number(of: device)
        touch(number: number)
        guard books.arrivalCalls[Int(number)] != call else { return false }
        books.arrivalCalls[Int(number)] = call
        return true
    }

    private mutating func touch(number: Int32) {
        let e = Int(number)
        guard books.pendingMarks[e] != pending.mark else { return }
        books.pendingMarks[e] = pending.mark
        pending.touched.append(number)
    }

    /// Fresh pending changes, listing nothing.
    private mutating func freshPendingChanges() -> PendingChanges {
        defer { nextPendingMark += 1 }
        return PendingChanges(mark: nextPendingMark)
    }

    // MARK: - Fences

    /// Adds `fence` to the engine, or replaces the one with its id.
    mutating func upsertFence(_ fence: Fence) {
        engine.upsert(fence)
        fenceLabels.removeAll()
    }

    /// Removes the fence with `id` from the engine.
    mutating func removeFence(id: FenceID) {
        engine.remove(id: id)
        fenceLabels.removeAll()
    }

    /// Removes every fence from the engine.
    mutating func removeAllFences() {
        engine.removeAllFences()
        fenceLabels.removeAll()
    }

    // MARK: - Events

    /// Numbers `events`, gives each its fence's name, group, properties and rendered message (fixed from
    /// now on: the store keeps them with the event), appends them to `output` and queues them for the
    /// store and the streams.
    ///
    /// The events are built once, in `output`; the pending log keeps that array itself (one reference,
    /// ``PendingEvents``), not a copy of each event, when `output` held nothing before (the usual case:
    /// a call's result).
    mutating func log(_ events: [GeofenceEvent], into output: inout [GeofencingEvent]) {
        guard !events.isEmpty else { return }
        output.reserveCapacity(output.count + events.count)
        let first = output.count
        // Readers besides the caller — the store (but the in-memory one, which only keeps the events),
        // the streams, the sink (the server's hub and webhooks), the observers — read every event's ids,
        // some more than once: with any of them both ids are made once here, from one hash of the visit
        // (≈ 1,000 instructions an event). Without, the caller is their only reader: they are made when
        // it reads them (`GeofenceEvent.identity`), and not at all when it does not.
        let makeIDs = storeReadsEventIDs || sink != nil || !streams.isEmpty || !observers.isEmpty
        for event in events {
            lastSequence += 1
            let label = fenceLabels.label(of: event, in: &engine)
            output.append(GeofencingEvent(sequence: lastSequence, event: event, label: label))
            if makeIDs { output[output.count - 1].event.makeIDsNow() }
            if !streams.isEmpty {
                for continuation in streams.values { continuation.yield(output[output.count - 1]) }
            }
        }
        let logged = first == 0 ? output : Array(output[first...])
        pending.events.append(logged)
        if !sinkWhenStored { sink?(logged) }
    }

    // MARK: - Commit

    /// Whether the durability policy wants a commit now (`force`: in any case).
    /// - Returns: the ticket for ``GroupCommit/commit(through:_:)``: the batch the changes made so far
    ///   belong to; `nil` when no commit is due.
    func commitTicket(force: Bool = false) -> UInt64? {
        if !force, case .everyUpdates(let n)? = options?.durability, pending.updates < n { return nil }
        return batch
    }

    /// Whether ``commitTicket(force:)`` will want a commit once `updates` more updates are consumed.
    func commitDue(adding updates: Int) -> Bool {
        if case .everyUpdates(let n)? = options?.durability { return pending.updates + updates >= n }
        return true
    }

    /// Takes every pending change out for a commit and closes the batch: changes made from now on
    /// belong to the next one.
    ///
    /// `listingDevices`: whether the touched devices' states go into the changes
    /// (``StoreChanges/devices``); without, ``writeDeviceStates(of:into:)`` writes them into the
    /// in-memory store's states instead, as part of that store's commit (``commitInPlace(lazily:)``).
    mutating func takeChanges(listingDevices: Bool = true) -> CommitWork {
        var work = CommitWork(batch: batch)
        batch &+= 1
        guard !pending.isEmpty else { return work }
        work.changes.fences = pending.fences
        work.changes.forgottenDevices = pending.forgotten
        // What the store holds of a device's presence is known unless this commit removes fences (their
        // rows go first): then the store rewrites every membership of the devices that changed.
        let removesFences = pending.fences.contains { if case .upsert = $0 { false } else { true } }
        work.removesFences = removesFences
        work.engineGeneration = engineGeneration
        work.listsDevices = listingDevices
        if listingDevices { listDeviceChanges(into: &work) }
        work.changes.events = pending.events.joined()
        work.changes.serviceConsent = pending.serviceConsent
        work.changes.deviceConsents = pending.deviceConsents
        work.changes.processedUpdates = pending.processedUpdatesChanged ? processedUpdates : nil
        work.acceptedSequence = engine.acceptedUpdateSequence
        work.arrivals = engine.arrivalCount
        if work.acceptedSequence != committedAcceptedSequence { work.changes.acceptedSequence = work.acceptedSequence }
        if work.arrivals != committedArrivals { work.changes.arrivals = work.arrivals }
        work.taken = pending
        pending = freshPendingChanges()
        return work
    }

    /// What the books hold as committed for device entry `e`: the stamp a commit may compare the engine's
    /// presence with (`nil` when there is none, when the engine is another, or when the commit removes
    /// fences — a stamp compares fence slots), and the memberships the store holds.
    ///
    /// Read by one `switch`: each read of a field through the array, or through optional chaining on a
    /// copy, copied the whole optional (and released it).
    @inline(__always)
    private func committedPresence(_ e: Int, removesFences: Bool)
        -> (stamp: DetectionEngine.PresenceStamp?, stored: [DetectionEngine.MembershipSnapshot]) {
        switch books.committed[e] {
        case .some(let committed):
            return (!removesFences && committed.generation == engineGeneration ? committed.stamp : nil,
                    committed.memberships)
        case .none:
            return (nil, [])
        }
    }

    /// The pending changes' touched devices as ``StoreChanges/devices`` of `work` (see ``takeChanges(listingDevices:)``).
    private mutating func listDeviceChanges(into work: inout CommitWork) {
        let removesFences = work.removesFences
        // One entry per touched device, each written in place: the engine writes the device's state
        // into it. Made one by one, each change (and the snapshot in it) was built in a temporary,
        // copied into the list and destroyed. The last commit's entries are written over (every field
        // is written below); more are made at once from one blank change.
        if !pending.touched.isEmpty {
            swap(&work.changes.devices, &spareDeviceChanges)
            if work.changes.devices.count < pending.touched.count {
                let blank = DeviceChange(snapshot: .unwritten(device: DeviceID(""), memberships: []), presenceChanged: false)
                work.changes.devices.append(contentsOf: repeatElement(blank, count: pending.touched.count - work.changes.devices.count))
            }
        }
        var k = 0  // the entry being written; entries from `k` on are another commit's, blank or left by a device not found
        for number in pending.touched {
            let e = Int(number)
            let device = books.devices[e]
            let (stamp, stored) = committedPresence(e, removesFences: removesFences)
            // The memberships start as what the store holds, which the engine leaves when the presence is
            // the one stamped; the engine writes every other field.
            work.changes.devices[k].snapshot.memberships = stored
            guard let written = engine.writeCommitSnapshot(of: device, handle: &books.handles[e], since: stamp,
                                                           into: &work.changes.devices[k].snapshot) else { continue }
            let change = k
            k += 1
            work.changes.devices[change].deviceNumber = number
            // An entry of the last commit may say its presence changed.
            if work.changes.devices[change].presenceChanged {
                work.changes.devices[change].presenceChanged = false
                work.changes.devices[change].storedMemberships = nil
            }
            guard !written.presenceUnchanged else { continue }
            let memberships = work.changes.devices[change].snapshot.memberships
            work.presence.append((number, memberships, written.stamp))
            if stored != memberships {
                work.changes.devices[change].presenceChanged = true
                if !removesFences { work.changes.devices[change].storedMemberships = stored }
            }
        }
        work.changes.devices.removeLast(work.changes.devices.count - k)
    }

    /// Writes the state of each device that `work` took (``takeChanges(listingDevices:)`` without listing
    /// them) into `states`, the in-memory store's, in place: exactly what that store makes of the
    /// ``DeviceChange``s ``listDeviceChanges(into:)`` lists, without them. A stored device's state is
    /// written over by the engine (its memberships left as the store holds them when the presence is
    /// the one committed); a device new to the store is written into a fresh state and appended; a
    /// device the engine no longer knows is left as it is. Records in `work` the presence to remember as
    /// committed, as the list does.
    ///
    /// `lazily`: a device the store holds is not written but left owed (``owedStates``), for
    /// ``payOwedStates()`` to write when someone may read it; a device new to the store is written.
    /// - Returns: whether a device was left owed.
    mutating func writeDeviceStates(of work: inout CommitWork, into states: inout DeviceStates, lazily: Bool = false) -> Bool {
        writeDeviceStates(of: work.taken.touched, removesFences: work.removesFences, into: &states,
                          presence: &work.presence, lazily: lazily)
    }

    /// ``writeDeviceStates(of:into:lazily:)`` for the devices numbered `numbers`; the presence to remember
    /// as committed is appended to `presence`.
    private mutating func writeDeviceStates(
        of numbers: [Int32], removesFences: Bool, into states: inout DeviceStates,
        presence: inout [(Int32, [DetectionEngine.MembershipSnapshot], DetectionEngine.PresenceStamp)], lazily: Bool
    ) -> Bool {
        let generation = engineGeneration
        var owes = false
        for number in numbers {
            let e = Int(number)
            if lazily, e < isOwed.count, isOwed[e] {
                owes = true
                continue
            }
            let device = books.devices[e]
            let p = states.position(of: device, number: number)
            if p >= 0, lazily {
                if e >= isOwed.count { isOwed += repeatElement(false, count: max(e + 1, books.devices.count) - isOwed.count) }
                isOwed[e] = true
                owedStates.append(number)
                owes = true
            } else if p >= 0 {
                // Only the stamp is needed here, read in place: a `switch` over the element (or optional
                // chaining through the array) copied the whole `CommittedPresence?`, memberships included.
                let stamp = books.committed.withUnsafeBufferPointer { committed -> DetectionEngine.PresenceStamp? in
                    guard !removesFences, committed[e]?.generation == generation else { return nil }
                    return committed[e]?.stamp ?? nil
                }
                // The store holds the memberships the books have as committed (they follow its every
                // change): the engine leaves them when the presence is the one stamped, as the list's
                // entry left the books' and the store then kept its own. A presence rebuilt equal to them
                // is written equal.
                guard let written = engine.writeCommitSnapshot(of: device, handle: &books.handles[e], since: stamp,
                                                               into: &states.states[p]) else { continue }
                guard !written.presenceUnchanged else { continue }
                presence.append((number, states.states[p].memberships, written.stamp))
            } else {
                let (stamp, stored) = committedPresence(e, removesFences: removesFences)
                var state = DetectionEngine.DeviceSnapshot.unwritten(device: device, memberships: stored)
                guard let written = engine.writeCommitSnapshot(of: device, handle: &books.handles[e], since: stamp,
                                                               into: &state) else { continue }
                // As the list's entry, appended: the memberships only when they differ from `stored`.
                let presenceChanged = !written.presenceUnchanged && stored != state.memberships
                if !written.presenceUnchanged { presence.append((number, state.memberships, written.stamp)) }
                if !presenceChanged { state.memberships = [] }
                _ = states.append(state, number: number)
            }
        }
        return owes
    }

    /// Writes every owed device state (``owedStates``) into the in-memory store, as the commits that left
    /// them owed would have, and remembers their presence as committed. Runs whenever the lock is taken
    /// (``lockTaken()``), before anything can change the engine: the engine then still holds each owed
    /// device's state as committed, since a device changed after its commit is committed again — and left
    /// owed again — in the same hold that changed it (``GeofencingService/processCommittingInPlace(_:simulated:store:)``).
    mutating func payOwedStates() {
        guard !owedStates.isEmpty else { return }
        let numbers = owedStates
        owedStates = []
        for number in numbers { isOwed[Int(number)] = false }
        guard let inPlace else { return }
        var presence: [(Int32, [DetectionEngine.MembershipSnapshot], DetectionEngine.PresenceStamp)] = []
        inPlace.store.payOwedStates(by: inPlace.lock) { states in
            _ = writeDeviceStates(of: numbers, removesFences: false, into: &states, presence: &presence, lazily: false)
        }
        for (number, memberships, stamp) in presence {
            books.committed[Int(number)] = CommittedPresence(memberships: memberships, stamp: stamp, generation: engineGeneration)
        }
    }

    /// Records that `work` is stored, and keeps its device entries for the next commit to write over
    /// (``spareDeviceChanges``; `work` is left without them).
    mutating func committed(_ work: inout CommitWork) {
        guard !work.isEmpty else { return }
        defer { if work.listsDevices { swap(&work.changes.devices, &spareDeviceChanges) } }
        if sinkWhenStored, !work.changes.events.isEmpty { sink?(work.changes.events) }
        commits += 1
        forgetCommittedPresence(in: work.changes.fences)
        for (number, memberships, stamp) in work.presence {
            books.committed[Int(number)] = CommittedPresence(memberships: memberships, stamp: stamp,
                                                        generation: work.engineGeneration)
        }
        committedAcceptedSequence = work.acceptedSequence
        committedArrivals = work.arrivals
    }

    /// Drops from the committed presence in ``books`` the memberships in fences that `changes` removed, as the store
    /// dropped their rows: it then says what the store holds (``DeviceChange/storedMemberships``).
    mutating func forgetCommittedPresence(in changes: [FenceChange]) {
        var removed: Set<FenceID> = []
        for change in changes {
            switch change {
            case .upsert: continue
            case .remove(let id): removed.insert(id)
            case .removeAll:
                for e in books.committed.indices where books.committed[e] != nil {
                    books.committed[e] = CommittedPresence(memberships: [])
                }
                return
            }
        }
        guard !removed.isEmpty else { return }
        for e in books.committed.indices {
            guard let committed = books.committed[e], committed.memberships.contains(where: { removed.contains($0.fence) }) else { continue }
            books.committed[e] = CommittedPresence(memberships: committed.memberships.filter { !removed.contains($0.fence) })
        }
    }

    /// Puts the changes of a failed commit back in front of those made since, for the next commit.
    mutating func failed(_ work: CommitWork) {
        guard !work.isEmpty else { return }
        var changes = work.taken
        // One mark for the merged list: the taken devices first, then those touched since and not taken.
        changes.mark = nextPendingMark
        nextPendingMark += 1
        for number in changes.touched { books.pendingMarks[Int(number)] = changes.mark }
        for number in pending.touched where books.pendingMarks[Int(number)] != changes.mark {
            books.pendingMarks[Int(number)] = changes.mark
            changes.touched.append(number)
        }
        changes.append(pending)
        pending = changes
    }

    /// Takes, writes and records every pending change in one store transaction, with the lock held.
    /// Only for a caller that is the group's committer (``GroupCommit/exclusively(_:)``).
    /// On failure the changes stay pending.
    mutating func commitHoldingLock(_ store: any GeofencingStore) throws(GeofencingError) {
        if inPlace != nil {
            if let error = commitInPlace().error { throw error }
            return
        }
        var work = takeChanges()
        guard !work.isEmpty else { return }
        do {
            try store.commit(work.changes)
        } catch {
            failed(work)
            throw CommitWork.storageError(error, work.changes)
        }
        committed(&work)
    }

    /// The in-memory store's commit, whole, with the lock held: the changes taken without their device
    /// list, and the engine writing each touched device's state straight into the store's
    /// (``writeDeviceStates(of:into:)``), inside the store's own atomic commit. The store cannot wait on
    /// anything, so the commit needs no time outside the lock; and a device's state is copied once, into
    /// the store, instead of written into a ``DeviceChange``, copied by the store, and the entry's old
    /// values released. On failure (only an event sequence that does not continue the store's log: a
    /// store written by another service) nothing is stored and the changes stay pending.
    ///
    /// `lazily`: the states of devices the store holds are left owed (``writeDeviceStates(of:into:lazily:)``):
    /// only for a caller that took the lock as it is (``ServiceLock/withLockAsIs(_:)``) and changed the
    /// engine in the same hold, after any payment due (a hold taken by ``ServiceLock/withLock(_:)`` pays
    /// at its start, and the engine is left as committed).
    /// - Returns: the outcome for ``GroupCommit``.
    mutating func commitInPlace(lazily: Bool = false) -> GroupCommit.Outcome {
        var work = takeChanges(listingDevices: false)
        guard !work.isEmpty else { return .init(durableBelow: work.batch + 1, error: nil) }
        guard let inPlace else {
            // Not configured on the in-memory store: there are no changes to commit then.
            failed(work)
            return .init(durableBelow: nil, error: .notConfigured, attemptedThrough: work.batch)
        }
        do {
            try inPlace.store.commit(work.changes, by: inPlace.lock) { states in
                writeDeviceStates(of: &work, into: &states, lazily: lazily)
            }
        } catch {
            failed(work)
            return .init(durableBelow: nil, error: CommitWork.storageError(error, work.changes, devices: work.taken.touched.count),
                         attemptedThrough: work.batch)
        }
        committed(&work)
        return .init(durableBelow: work.batch + 1, error: nil)
    }

    // MARK: - Loading

    /// Makes the fence for `feature` with the current options.
    func makeFence(_ feature: GeoJSON.Feature, options: GeofencingOptions, index: Int? = nil) throws(GeofencingError) -> Fence {
        let place = index.map { "feature \($0)" } ?? "the feature"
        guard let id = feature.id else {
            throw GeofencingError(.invalidFeature, "\(place) has no id; give every feature a string or integer id so it can be replaced and removed")
        }
        let loader = FenceLoader(options: FenceLoader.Options(defaultRadius: options.defaultRadius))
        let result = loader.load(.feature(feature))
        let errors = result.problems.filter { $0.severity == .error }
        guard errors.isEmpty, let fence = result.fences.first else {
            let text = errors.map(\.message).joined(separator: "; ")
            throw GeofencingError(.invalidFeature, "\(place) (id \"\(id)\") cannot be monitored: \(text)",
                                  featureID: FenceID(id.description), problems: result.problems)
        }
        return fence
    }

    /// Rebuilds the engine from the features, `devices` and the engine-wide state (after a load or a
    /// reconfiguration).
    mutating func rebuild(options: GeofencingOptions, order: [FenceID], devices: [DetectionEngine.DeviceSnapshot],
                          engineState: DetectionEngine.EngineState) throws(GeofencingError) {
        var fences: [Fence] = []
        fences.reserveCapacity(order.count)
        for id in order {
            guard let feature = features[id] else { continue }
            fences.append(try makeFence(feature, options: options))
        }
        var engine = ShardedEngine(fences: fences, configuration: options.engineConfiguration, shards: options.shards)
        do {
            try engine.restore(devices, engineState: engineState)
        } catch {
            throw GeofencingError(.incompatibleStorage, "the stored device state cannot be restored: \(error)")
        }
        self.engine = engine
        fenceLabels.removeAll()
        booksBySlot = []
        self.options = options
        engineGeneration &+= 1
    }

    /// Loads the store's contents into a fresh core.
    mutating func load(_ state: StoredState, options: GeofencingOptions) throws(GeofencingError) {
        var order: [FenceID] = []
        var additions: [FenceID: Int64] = [:]
        for stored in state.fences {
            if let sequence = stored.additionSequence { additions[stored.id] = sequence }
            let result = GeoJSONReader().read(Array(stored.feature.utf8))
            guard !result.hasErrors, case .feature(let feature)? = result.object else {
                let reason = result.errors.first.map(\.description) ?? "it is not a GeoJSON Feature"
                throw GeofencingError(.incompatibleStorage, "stored feature \"\(stored.id)\" cannot be read: \(reason)",
                                      featureID: stored.id)
            }
            features[stored.id] = feature
            positions[stored.id] = stored.position
            nextPosition = max(nextPosition, stored.position + 1)
            order.append(stored.id)
        }
        do {
            try rebuild(options: options, order: order, devices: state.devices,
                        engineState: .init(acceptedSequence: state.acceptedSequence, arrivals: state.arrivals,
                                           fenceAdditions: additions))
        } catch where error.code == .invalidFeature {
            throw GeofencingError(.incompatibleStorage, "a stored feature cannot be loaded with these options: \(error.message)",
                                  featureID: error.featureID, problems: error.problems)
        }
        serviceConsent = state.serviceConsent ?? true
        deviceConsents = state.deviceConsents
        lastSequence = state.lastEventSequence
        processedUpdates = state.processedUpdates
        books = DeviceBooks()
        books.reserveCapacity(adding: state.devices.count)
        for device in state.devices {
            books.committed[Int(books.number(of: device.device))] = CommittedPresence(memberships: device.memberships)
        }
        committedAcceptedSequence = state.acceptedSequence
        committedArrivals = state.arrivals
    }

    /// Processes updates still waiting in reorder buffers when the reorder window is now off (after a
    /// reconfiguration, or a store written with another window), so that none is left behind.
    mutating func releaseOrphanedUpdates(into output: inout [GeofencingEvent]) {
        guard engine.configuration.reorderWindow == 0, engine.bufferedUpdateCount > 0 else { return }
        touch(engine.deviceSnapshots.filter { !($0.stream?.buffered.isEmpty ?? true) }.map(\.device))
        var events: [GeofenceEvent] = []
        engine.flush(into: &events)
        log(events, into: &output)
    }

    /// Fence ids by position.
    var orderedFenceIDs: [FenceID] {
        positions.sorted { $0.value < $1.value }.map(\.key)
    }

    func hasConsent(_ device: DeviceID, options: GeofencingOptions) -> Bool {
        serviceConsent && (deviceConsents[device] ?? options.consentByDefault)
    }
}

extension ServiceCore: LockedValue {
    /// Pays the device states owed to the in-memory store (``payOwedStates()``) before the lock's holder
    /// can read or change anything.
    mutating func lockTaken() {
        if !owedStates.isEmpty { payOwedStates() }
    }
}

/// The in-memory store a service commits to in place, and the service's lock (which the store takes to
/// have owed states paid: ``InMemoryGeofencingStore/commit(_:by:writingDevices:)``).
struct InPlaceStore {
    let store: InMemoryGeofencingStore
    weak var lock: ServiceLock<ServiceCore>?
}

/// What the store holds of a device's presence since the last commit, and the engine's stamp of it then.
struct CommittedPresence {
    /// The memberships the store holds.
    var memberships: [DetectionEngine.MembershipSnapshot]
    /// The engine's presence when they were taken (``DetectionEngine/PresenceStamp``): while the engine
    /// still holds it, the memberships are unchanged and need not be built again; `nil` when unknown.
    var stamp: DetectionEngine.PresenceStamp? = nil
    /// The ``ServiceCore/engineGeneration`` the stamp belongs to.
    var generation: UInt64 = 0
}

/// The changes one commit takes out of the service and writes (see ``ServiceCore/takeChanges()``).
struct CommitWork {
    /// The batch the commit closed: once stored, every batch up to this one is.
    var batch: UInt64
    /// What the store writes.
    var changes = StoreChanges()
    /// The pending changes taken, to put back if the commit fails.
    var taken = PendingChanges(mark: 0)
    /// Presence taken from the engine (to remember as committed): the memberships written, or those the
    /// store already held when only the engine's stamp of them is new.
    /// Each with its device's ``DeviceBooks`` number.
    var presence: [(Int32, [DetectionEngine.MembershipSnapshot], DetectionEngine.PresenceStamp)] = []
    /// ``ServiceCore/engineGeneration`` when the changes were taken (their stamps belong to that engine).
    var engineGeneration: UInt64 = 0
    /// Whether the commit removes fences: then what the store holds of a device's presence is not known
    /// when its state is written (the stamps do not hold).
    var removesFences = false
    /// Whether ``changes`` list the touched devices (else the in-memory store's commit has them written
    /// in place: ``ServiceCore/commitInPlace(lazily:)``).
    var listsDevices = true
    var acceptedSequence: Int64 = 0
    var arrivals: UInt64 = 0

    /// Whether there was nothing to store.
    var isEmpty: Bool { taken.isEmpty }

    /// The service's error for a store failure while writing `changes`.
    static func storageError(_ error: any Error, _ changes: StoreChanges, devices: Int? = nil) -> GeofencingError {
        .storage(error, while: "committing \(changes.events.count) events and \(devices ?? changes.devices.count) device states")
    }
}
