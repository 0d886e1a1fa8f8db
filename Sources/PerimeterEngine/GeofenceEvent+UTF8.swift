extension GeofenceEvent {
    /// Appends the UTF-8 bytes of ``id`` to `bytes` — exactly `bytes.append(contentsOf: id.utf8)` —
    /// without making the `String`: for a store that gathers an event's texts in one buffer of its own
    /// (an engine id's 32 digits are written from its bits straight into `bytes`).
    public func appendIDUTF8(to bytes: inout [UInt8]) {
        identifier.appendUTF8(to: &bytes)
    }

    /// Appends the UTF-8 bytes of ``visitID`` to `bytes` — exactly `bytes.append(contentsOf:
    /// visitID.utf8)` — without making the `String` (see ``appendIDUTF8(to:)``).
    public func appendVisitIDUTF8(to bytes: inout [UInt8]) {
        visitIdentifier.appendUTF8(to: &bytes)
    }
}

extension EventIdentifier {
    /// Appends the UTF-8 bytes of ``text`` to `bytes`.
    func appendUTF8(to bytes: inout [UInt8]) {
        switch self {
        case let .bits(high, low):
            withUnsafeBytes(of: Self.digits(high: high, low: low)) { bytes.append(contentsOf: $0) }
        case let .text(text):
            bytes.append(contentsOf: text.utf8)
        }
    }
}
