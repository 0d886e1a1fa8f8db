/// Identifies one fence: the GeoJSON feature's `id`, as text.
///
/// A string id is kept as given; an integer id is kept as its exact decimal text (`9007199254740993`,
/// never rounded through `Double`). Ids are compared byte for byte (UTF-8), which is the order in which
/// simultaneous events for several fences are reported.
public struct FenceID: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The id as text.
    public var rawValue: String

    /// Creates a fence id from its text.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// Byte-wise (UTF-8) order, independent of locale and Unicode normalisation.
    public static func < (lhs: FenceID, rhs: FenceID) -> Bool {
        lhs.rawValue.utf8.lexicographicallyPrecedes(rhs.rawValue.utf8)
    }
}
