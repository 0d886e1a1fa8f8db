/// What happened between a device and a fence.
public enum GeofenceEventKind: String, Hashable, Sendable, CaseIterable, Comparable {
    /// The device is inside a fence it was outside of (or whose state was unknown).
    case entry
    /// The device has stayed inside the fence for the fence's dwell time.
    case dwell
    /// The device left a fence it was inside.
    case exit
    /// The straight path between two updates outside the fence passed through it (crossings option).
    case cross
    /// The device is inside the fence (level event of the `inside` initial-trigger option).
    case inside

    private var order: Int {
        switch self {
        case .entry: 0
        case .dwell: 1
        case .exit: 2
        case .cross: 3
        case .inside: 4
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.order < rhs.order }
}

/// A set of ``GeofenceEventKind``s: the events a fence emits.
public struct GeofenceEventKinds: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let entry = GeofenceEventKinds(rawValue: 1 << 0)
    public static let dwell = GeofenceEventKinds(rawValue: 1 << 1)
    public static let exit = GeofenceEventKinds(rawValue: 1 << 2)
    public static let cross = GeofenceEventKinds(rawValue: 1 << 3)
    public static let inside = GeofenceEventKinds(rawValue: 1 << 4)
    /// Every kind: the default. `cross` and `inside` only ever occur when their option is on.
    public static let all: GeofenceEventKinds = [.entry, .dwell, .exit, .cross, .inside]

    /// The set holding just `kind`.
    public init(_ kind: GeofenceEventKind) {
        switch kind {
        case .entry: self = .entry
        case .dwell: self = .dwell
        case .exit: self = .exit
        case .cross: self = .cross
        case .inside: self = .inside
        }
    }

    /// Whether the set holds `kind`.
    @inlinable
    public func contains(_ kind: GeofenceEventKind) -> Bool {
        switch kind {
        case .entry: contains(GeofenceEventKinds.entry)
        case .dwell: contains(GeofenceEventKinds.dwell)
        case .exit: contains(GeofenceEventKinds.exit)
        case .cross: contains(GeofenceEventKinds.cross)
        case .inside: contains(GeofenceEventKinds.inside)
        }
    }
}
