import PerimeterEngine
import PerimeterFences

/// A device's presence as stored (schema version 10): every membership of the device in one BLOB, the
/// `presence.memberships` column of the device's one row, so that a commit writes one row for a device
/// whose presence changed instead of one row per membership entered, left or dwelled in.
///
/// Layout: a format byte (1), the count (a varint), then per membership the fence id (its UTF-8 byte
/// count as a varint, then the bytes), the entry time (the double's bits, 8 bytes little-endian), the
/// visit sequence (a varint) and a flags byte (1: the dwell has fallen due, 2: an ordinal follows), then
/// the ordinal (a varint) when flag 2 is set — a visit recorded before ordinals existed has none. A
/// varint is unsigned LEB128: 7 bits a byte, low bits first, the high bit set on every byte but the
/// last. Doubles keep their bits, so every value round-trips exactly. A count of zero is a device
/// inside no fence.
///
/// Varints rather than fixed widths: the rows are small and a commit of the full workload rewrites
/// nearly every page of the table, so their size is pages written to the log (fixed 4- and 8-byte
/// fields made the table 87 pages where version 9's rows took 55).
enum PresenceCodec {
    static let format: UInt8 = 1

    /// Flag: the visit's dwell has fallen due.
    static let dwelledFlag: UInt8 = 1
    /// Flag: an ordinal follows.
    static let ordinalFlag: UInt8 = 2

    /// The smallest encoded membership: an empty fence id, the entry time, a one-byte visit sequence and
    /// the flags.
    static let minimumMembershipSize = 1 + 8 + 1 + 1

    /// The bytes `value` takes as a varint.
    @inline(__always)
    static func varintSize(_ value: UInt64) -> Int {
        (64 - value.leadingZeroBitCount + 6) / 7 + (value == 0 ? 1 : 0)
    }

    /// Appends the encoding of `memberships` to `bytes`, in the order given.
    ///
    /// The size is counted first and the bytes stored in place: appending field by field (each value's
    /// bytes, each id's UTF-8 view) cost ≈ 2,200 instructions a device in a commit.
    static func append(_ memberships: [DetectionEngine.MembershipSnapshot], to bytes: inout [UInt8]) {
        var size = 1 + varintSize(UInt64(memberships.count))
        for m in memberships {
            let count = m.fence.rawValue.utf8.count
            size += varintSize(UInt64(count)) + count + 8 + varintSize(m.visitSequence) + 1
            if let ordinal = m.ordinal { size += varintSize(UInt64(ordinal)) }
        }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: size))
        bytes.withUnsafeMutableBytes { raw in
            var at = start
            func varint(_ value: UInt64) {
                var v = value
                while v >= 0x80 {
                    raw[at] = UInt8(truncatingIfNeeded: v) | 0x80
                    at += 1
                    v >>= 7
                }
                raw[at] = UInt8(v)
                at += 1
            }
            raw[at] = format
            at += 1
            varint(UInt64(memberships.count))
            for m in memberships {
                var fence = m.fence.rawValue
                let count = fence.utf8.count
                varint(UInt64(count))
                fence.withUTF8 { utf8 in
                    if let source = utf8.baseAddress { (raw.baseAddress! + at).copyMemory(from: source, byteCount: count) }
                }
                at += count
                raw.storeBytes(of: m.entryTime.bitPattern.littleEndian, toByteOffset: at, as: UInt64.self)
                at += 8
                varint(m.visitSequence)
                raw[at] = (m.hasDwelled ? dwelledFlag : 0) | (m.ordinal == nil ? 0 : ordinalFlag)
                at += 1
                if let ordinal = m.ordinal { varint(UInt64(ordinal)) }
            }
        }
    }

    /// The encoding of `memberships`.
    static func encode(_ memberships: [DetectionEngine.MembershipSnapshot]) -> [UInt8] {
        var bytes: [UInt8] = []
        append(memberships, to: &bytes)
        return bytes
    }

    /// A varint from `r`; refuses one longer than ten bytes or beyond 64 bits.
    private static func varint(_ r: inout OptionStateCodec.Reader) throws(OptionStateCodec.DecodingError) -> UInt64 {
        let start = r.offset
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try r.byte()
            let bits = UInt64(byte & 0x7F)
            guard shift < 64, shift < 63 || bits <= 1 else {
                throw .init(description: "a varint beyond 64 bits at byte \(start)")
            }
            value |= bits << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
    }

    /// The memberships in `bytes`, in their stored order; refuses a wrong format, unknown flags, a
    /// count beyond the data, an ordinal beyond 32 bits, invalid UTF-8 and bytes left over.
    static func decode(_ bytes: [UInt8]) throws(OptionStateCodec.DecodingError) -> [DetectionEngine.MembershipSnapshot] {
        var r = OptionStateCodec.Reader(bytes: bytes)
        let version = try r.byte()
        guard version == format else { throw .init(description: "unknown presence format \(version)") }
        let at = r.offset
        let count = try varint(&r)
        guard count <= UInt64((bytes.count - r.offset) / minimumMembershipSize) else {
            throw .init(description: "count \(count) at byte \(at) exceeds the data")
        }
        var memberships: [DetectionEngine.MembershipSnapshot] = []
        memberships.reserveCapacity(Int(count))
        for _ in 0..<count {
            let length = try varint(&r)
            guard length <= UInt64(bytes.count - r.offset) else {
                throw .init(description: "truncated at byte \(r.offset) of \(bytes.count)")
            }
            let utf8 = try r.take(Int(length))
            guard let id = String(validating: utf8, as: UTF8.self) else {
                throw .init(description: "invalid UTF-8 at byte \(r.offset - Int(length))")
            }
            let fence = FenceID(id)
            let entryTime = try r.f64()
            let visitSequence = try varint(&r)
            let flags = try r.byte()
            guard flags & ~(dwelledFlag | ordinalFlag) == 0 else {
                throw .init(description: "unknown presence flags \(flags) for fence \(fence)")
            }
            var ordinal: UInt32?
            if flags & ordinalFlag != 0 {
                let value = try varint(&r)
                guard let narrow = UInt32(exactly: value) else { throw .init(description: "ordinal \(value) beyond 32 bits") }
                ordinal = narrow
            }
            memberships.append(.init(fence: fence, entryTime: entryTime, visitSequence: visitSequence, ordinal: ordinal,
                                     hasDwelled: flags & dwelledFlag != 0))
        }
        guard r.offset == bytes.count else { throw .init(description: "\(bytes.count - r.offset) unexpected bytes at the end") }
        return memberships
    }
}
