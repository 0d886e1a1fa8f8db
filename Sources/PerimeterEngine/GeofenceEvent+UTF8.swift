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
            let (h0, h1) = StableHash.hexWords(high), (l0, l1) = StableHash.hexWords(low)
            // The words hold the digits in little-endian byte order, as `text` stores them.
            let digits = (h0.littleEndian, h1.littleEndian, l0.littleEndian, l1.littleEndian)
            withUnsafeBytes(of: digits) { bytes.append(contentsOf: $0) }
        case let .text(text):
            bytes.append(contentsOf: text.utf8)
        }
    }
}
