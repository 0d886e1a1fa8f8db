/// Identifies one device (a phone, a vehicle, a tracker) whose location updates the engine follows.
///
/// Device ids are opaque strings compared byte for byte; events for several devices at the same time
/// are ordered by device id.
public struct DeviceID: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The id as given.
    public var rawValue: String

    /// Creates a device id from its string form.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// Byte-wise (UTF-8) order, independent of locale and Unicode normalisation.
    public static func < (lhs: DeviceID, rhs: DeviceID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}
