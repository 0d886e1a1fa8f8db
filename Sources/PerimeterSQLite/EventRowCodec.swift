import PerimeterEngine
import PerimeterFences

/// The compact values of an event log row (schema version 9): an event's kind and exit reason as small
/// integers, and an id the engine made — 32 lower-case hex digits — as its 16 bytes.
///
/// The `id` and `visit_id` columns have no type affinity and hold either form: a 16-byte BLOB, the id's
/// 128 bits in the order of its digits (big-endian: the BLOB's hex is the id), or TEXT, any other id as
/// given (one a caller made, and every id of rows logged before version 9, which keep their text).
/// Which form a row holds follows from the id alone (``GeofenceEvent/idBits``), so an id reads back as
/// the same text either way. Written this way a row of engine events costs ≈ 1,450 instructions less
/// (measured, session 19): no hex formatting, no kind or reason text, and SQLite copies 16 bytes an
/// id instead of 32.
///
/// `kind` and `reason` hold the codes below; a row that holds text there (a value migration 9 did not
/// know) is read as before: its text, or refused with `incompatibleStorage`. The codes are part of the
/// file format: never renumber them.
enum EventRowCodec {
    /// The stored code of `kind`.
    static func code(of kind: GeofenceEventKind) -> Int64 {
        switch kind {
        case .entry: 0
        case .dwell: 1
        case .exit: 2
        case .cross: 3
        case .inside: 4
        }
    }

    /// The kind stored as `code`, `nil` for a code no kind has.
    static func kind(code: Int64) -> GeofenceEventKind? {
        switch code {
        case 0: .entry
        case 1: .dwell
        case 2: .exit
        case 3: .cross
        case 4: .inside
        default: nil
        }
    }

    /// The stored code of `reason`.
    static func code(of reason: ExitReason) -> Int64 {
        switch reason {
        case .left: 0
        case .timeout: 1
        case .reset: 2
        }
    }

    /// The exit reason stored as `code`, `nil` for a code no reason has.
    static func reason(code: Int64) -> ExitReason? {
        switch code {
        case 0: .left
        case 1: .timeout
        case 2: .reset
        default: nil
        }
    }

    /// Appends the 16 bytes of an id's bits, `high` first, each big-endian.
    @inline(__always)
    static func append(_ bits: (high: UInt64, low: UInt64), to bytes: inout [UInt8]) {
        withUnsafeBytes(of: (bits.high.bigEndian, bits.low.bigEndian)) { bytes.append(contentsOf: $0) }
    }

    /// The id whose bytes ``append(_:to:)`` wrote: 32 lower-case hex digits; `nil` unless `bytes` are 16.
    static func idText(_ bytes: [UInt8]) -> String? {
        guard bytes.count == 16 else { return nil }
        let digits = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: 32) { buffer in
            for (i, byte) in bytes.enumerated() {
                buffer[2 * i] = digits[Int(byte >> 4)]
                buffer[2 * i + 1] = digits[Int(byte & 0xF)]
            }
            return 32
        }
    }
}
