import PerimeterFences

/// Identifies one device (a phone, a vehicle, a tracker) whose location updates the engine follows.
///
/// Device ids compare as Swift strings: equal when canonically equivalent, ordered byte-wise (UTF-8)
/// by their canonical composition (NFC) — for ASCII text simply byte-wise order, the same on
/// every platform and independent of locale. Events for several devices at the same time are ordered by
/// device id; the order agrees with equality (ids that are equal never sort apart).
public struct DeviceID: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The id as given.
    public var rawValue: String

    /// Creates a device id from its string form.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// Byte-wise UTF-8 order of the canonical composition (``IdentifierOrder``), independent of locale;
    /// consistent with `==`.
    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool {
        IdentifierOrder.precedes(lhs.rawValue, rhs.rawValue)
    }
}
