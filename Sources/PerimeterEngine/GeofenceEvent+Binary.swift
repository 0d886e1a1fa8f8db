extension GeofenceEvent {
    /// ``id`` as 128 bits when it is 32 lower-case hex digits (every id the engine makes): `high` is
    /// the value of its first 16 digits, `low` of its last 16; `nil` for any other text (an id given to
    /// ``init(id:visitID:kind:fence:device:time:coordinate:timeInside:observedAt:reason:)``).
    ///
    /// For a store that keeps an engine's ids as 16 bytes instead of 32 digits: the digits are the
    /// bits in hex, so they can be written again exactly from these values, and no formatting is done
    /// to read them.
    public var idBits: (high: UInt64, low: UInt64)? {
        identifier.bits
    }

    /// ``visitID`` as 128 bits when it is 32 lower-case hex digits, `nil` otherwise (see ``idBits``).
    public var visitIDBits: (high: UInt64, low: UInt64)? {
        visitIdentifier.bits
    }
}

extension EventIdentifier {
    /// The bits of an identifier held as bits (32 lower-case hex digits); `nil` for other text.
    var bits: (high: UInt64, low: UInt64)? {
        if case let .bits(high, low) = self { (high, low) } else { nil }
    }
}
