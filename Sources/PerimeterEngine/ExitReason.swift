/// Why an exit happened.
public enum ExitReason: String, Hashable, Sendable, CaseIterable {
    /// An update (or its confirmation) showed the device outside: the default.
    case left
    /// The device went silent for longer than the fence's staleness limit (`exitOnStale`).
    case timeout
    /// The device was forgotten (``DetectionEngine/forget(_:exitsAt:into:)``, `DELETE /v1/devices/{id}`)
    /// and asked for exits from the fences it was inside.
    case reset
}
