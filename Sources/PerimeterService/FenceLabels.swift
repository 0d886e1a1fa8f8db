import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON

/// What a logged event carries of its fence: the fence's name, group and properties, and the fence itself
/// when it has a message template to render for each event.
///
/// One shared instance per fence (a class): logging an event retains it once instead of copying the whole
/// ``Fence`` (its region, strings and properties, each retained and released again).
final class FenceLabel: Sendable {
    /// The fence's id.
    let id: FenceID
    /// ``Fence/name``.
    let name: String?
    /// ``Fence/group``.
    let group: String?
    /// ``Fence/properties``.
    let properties: [String: JSONValue]
    /// The fence, when it has a ``Fence/message`` template (rendered per event); `nil` otherwise.
    let fenceWithMessage: Fence?

    init(_ fence: Fence) {
        id = fence.id
        name = fence.name
        group = fence.group
        properties = fence.properties
        fenceWithMessage = fence.message == nil ? nil : fence
    }
}

/// The ``FenceLabel`` of each of the engine's fences, by fence slot, made on first use.
///
/// Logging an event named its fence by id: a hash of the id and a copy of the whole fence per event.
/// The engine records the fence's slot in each event it makes (``ShardedEngine/fenceSlot(of:)`` checks
/// it), so the label is found by that number instead.
///
/// A label is what the fence was when the label was made; the labels hold only while the engine's fences
/// do not change. ``ServiceCore`` empties them whenever it adds, replaces or removes a fence or makes a
/// new engine (``ServiceCore/upsertFence(_:)``, ``ServiceCore/removeFence(id:)``,
/// ``ServiceCore/removeAllFences()``, ``ServiceCore/rebuild(options:order:devices:engineState:)``).
struct FenceLabels {
    private var bySlot: [FenceLabel?] = []

    /// Forgets every label (the engine's fences changed).
    mutating func removeAll() {
        bySlot.removeAll()
    }

    /// The label of `event`'s fence as `engine` holds it now (the fence with the event's fence id), or
    /// `nil` when the engine has no fence with that id.
    /// - Complexity: O(1) without hashing when the event records its fence's slot in `engine` (every
    ///   event `engine` made) and the label was made before; else one look-up of the id.
    mutating func label(of event: GeofenceEvent, in engine: inout ShardedEngine) -> FenceLabel? {
        guard let slot = engine.fenceSlot(of: event) else {
            return engine.fenceInPlace(id: event.fence).map(FenceLabel.init)
        }
        let s = Int(slot)
        if s < bySlot.count, let label = bySlot[s] { return label }
        // The fence in `slot` has the event's fence id: it is the fence with that id (taken by slot:
        // by id, the look-up hashed the id).
        guard let fence = engine.fenceInPlace(slot: slot) else { return nil }
        let label = FenceLabel(fence)
        if s >= bySlot.count { bySlot += repeatElement(nil, count: s - bySlot.count + 1) }
        bySlot[s] = label
        return label
    }
}
