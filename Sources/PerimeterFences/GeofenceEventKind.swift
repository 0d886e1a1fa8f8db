/// What happened between a device and a fence.
public enum GeofenceEventKind: String, Hashable, Sendable, CaseIterable, Comparable {
    /// The device is inside a fence it was outside of (or whose state was unknown).
    case entry
    /// The device has stayed inside the fence for the fence's dwell time.
    case dwell
    /// The device left a fence it was inside.
    case exit

    private var order: Int {
        switch self {
        case .entry: 0
        case .dwell: 1
        case .exit: 2
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
    /// Entry, dwell and exit: the default.
    public static let all: GeofenceEventKinds = [.entry, .dwell, .exit]

    /// The set holding just `kind`.
    public init(_ kind: GeofenceEventKind) {
        switch kind {
        case .entry: self = .entry
        case .dwell: self = .dwell
        case .exit: self = .exit
        }
    }

    /// Whether the set holds `kind`.
    @inlinable
    public func contains(_ kind: GeofenceEventKind) -> Bool {
        switch kind {
        case .entry: contains(GeofenceEventKinds.entry)
        case .dwell: contains(GeofenceEventKinds.dwell)
        case .exit: contains(GeofenceEventKinds.exit)
        }
    }
}
