/// Identifies one fence: the GeoJSON feature's `id`, as text.
///
/// A string id is kept as given; an integer id is kept as its exact decimal text (`9007199254740993`,
/// never rounded through `Double`). Ids compare as Swift strings: equal when canonically equivalent (an
/// "é" written precomposed or decomposed is the same id), ordered byte-wise (UTF-8) by their
/// canonical composition (NFC) — for ASCII text simply byte-wise order, the same on every platform and
/// independent of locale. That order is the one in which simultaneous events for several fences are
/// reported; it agrees with equality (ids that are equal never sort apart).
public struct FenceID: Hashable, Comparable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The id as text.
    public var rawValue: String

    /// Creates a fence id from its text.
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    /// Byte-wise UTF-8 order of the canonical composition (``IdentifierOrder``), independent of locale;
    /// consistent with `==`.
    public static func < (lhs: FenceID, rhs: FenceID) -> Bool {
        IdentifierOrder.precedes(lhs.rawValue, rhs.rawValue)
    }
}
