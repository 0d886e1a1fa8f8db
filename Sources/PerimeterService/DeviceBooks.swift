import PerimeterEngine

/// What the service keeps of each device it has touched: one entry per device, numbered, found by id at
/// most once per batch.
///
/// A batch names the devices it changed by id; the commit then needs, for each, what was last committed
/// of its presence and its state in the engine. Kept in dictionaries by id, that cost a hash look-up of
/// the id per device for the pending set, another for the committed presence, another to write it back,
/// and the engine's own look-up. Here the id is looked up when the device is touched (and not at all
/// when the engine's batch gives its slot: ``ServiceCore/booksBySlot``); the pending changes list entry
/// numbers, and the entry holds the committed presence and a ``DeviceHandle`` for the engine's look-up.
///
/// Entries are never removed (numbers stay valid); a forgotten device's entry keeps its id and handle
/// (which the engine then refuses), and is used again if the device comes back.
struct DeviceBooks {
    // One array per field, indexed by entry number: reading a field of a whole-entry struct through an
    // array element copied the entry (every reference in it retained, then released).

    /// Each entry's device.
    private(set) var devices: [DeviceID] = []
    /// The ``PendingChanges/mark`` of the pending changes that list the device (0: none).
    var pendingMarks: [UInt64] = []
    /// The live call (``ServiceCore/liveCalls``) that last recorded the device's arrival (0: none).
    var arrivalCalls: [UInt64] = []
    /// Where the device lies in the engine: a hint the engine checks (``DeviceHandle``).
    var handles: [DeviceHandle] = []
    /// What the store holds of the device's presence since the last commit; `nil` when nothing is
    /// committed for the device.
    var committed: [CommittedPresence?] = []
    private var numbers: [DeviceID: Int32] = [:]

    /// The number of `device`'s entry, made when there is none.
    /// - Complexity: one hash look-up of the id (amortised O(1)).
    mutating func number(of device: DeviceID) -> Int32 {
        if let number = numbers[device] { return number }
        let number = Int32(devices.count)
        devices.append(device)
        pendingMarks.append(0)
        arrivalCalls.append(0)
        handles.append(DeviceHandle())
        committed.append(nil)
        numbers[device] = number
        return number
    }

    /// The number of `device`'s entry, if it has one.
    func existingNumber(of device: DeviceID) -> Int32? { numbers[device] }

    /// Room for `count` more devices.
    mutating func reserveCapacity(adding count: Int) {
        let n = devices.count + count
        devices.reserveCapacity(n)
        pendingMarks.reserveCapacity(n)
        arrivalCalls.reserveCapacity(n)
        handles.reserveCapacity(n)
        committed.reserveCapacity(n)
        numbers.reserveCapacity(n)
    }
}
