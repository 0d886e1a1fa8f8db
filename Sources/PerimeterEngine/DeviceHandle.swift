/// Where one device's state sits in one ``DetectionEngine``: kept by a caller that sends many updates of
/// the same device, so that each update skips hashing the device id and searching the device table.
///
/// Start with ``init()`` (unresolved) and pass the same handle, `inout`, with every update of that device
/// to ``DetectionEngine/process(_:handle:into:)``; the engine fills it in on the first update and keeps it
/// right afterwards. A handle is a hint, never a source of truth: the engine checks that the handle's
/// slot holds the update's device (one comparison of the two ids, a few instructions when they are the
/// same string) and that the device was not forgotten since, and otherwise looks the id up as
/// ``DetectionEngine/process(_:into:)`` does and corrects the handle. So a stale, wrong or another
/// engine's handle costs one lookup, never a wrong result: events are those of the id in the update.
public struct DeviceHandle: Hashable, Sendable {
    /// The device's slot in the engine that filled the handle in; -1 when unresolved.
    let slot: Int32

    /// An unresolved handle: the first update processed with it resolves it.
    public init() { slot = -1 }

    init(slot: Int32) { self.slot = slot }

    /// Whether an engine has filled the handle in.
    public var isResolved: Bool { slot >= 0 }
}
