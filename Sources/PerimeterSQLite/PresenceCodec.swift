import PerimeterEngine
import PerimeterFences

/// A device's presence as stored (schema version 10): every membership of the device in one BLOB, the
/// `presence.memberships` column of the device's one row, so that a commit writes one row for a device
/// whose presence changed instead of one row per membership entered, left or dwelled in.
///
/// Layout, little-endian: a format byte (1), a count (u32), then per membership the fence (u32 byte
/// count and UTF-8), the entry time (f64 bit pattern), the visit sequence (u64) and a flags byte (1:
/// the dwell has fallen due, 2: an ordinal follows), then the ordinal (u32) when flag 2 is set — a
/// visit recorded before ordinals existed has none. Doubles keep their bits, so every value round-trips
/// exactly. A count of zero is a device inside no fence.
enum PresenceCodec {
    static let format: UInt8 = 1

    /// Flag: the visit's dwell has fallen due.
    static let dwelledFlag: UInt8 = 1
    /// Flag: an ordinal follows.
    static let ordinalFlag: UInt8 = 2

    /// The smallest encoded membership: an empty fence id, the two 8-byte values and the flags.
    static let minimumMembershipSize = 4 + 8 + 8 + 1

    /// Appends the encoding of `memberships` to `bytes`, in the order given.
    ///
    /// The size is counted first and the bytes stored in place: appending field by field (each value's
    /// bytes, each id's UTF-8 view) cost ≈ 2,200 instructions a device in a commit.
    static func append(_ memberships: [DetectionEngine.MembershipSnapshot], to bytes: inout [UInt8]) {
        var size = 5
        for m in memberships { size += minimumMembershipSize + m.fence.rawValue.utf8.count + (m.ordinal == nil ? 0 : 4) }
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: size))
        bytes.withUnsafeMutableBytes { raw in
            var at = start
            func store<T: FixedWidthInteger>(_ value: T) {
                raw.storeBytes(of: value.littleEndian, toByteOffset: at, as: T.self)
                at += MemoryLayout<T>.size
            }
            store(format)
            store(UInt32(truncatingIfNeeded: memberships.count))
            for m in memberships {
                var fence = m.fence.rawValue
                let count = fence.utf8.count
                store(UInt32(truncatingIfNeeded: count))
                fence.withUTF8 { utf8 in
                    if let source = utf8.baseAddress { (raw.baseAddress! + at).copyMemory(from: source, byteCount: count) }
                }
                at += count
                store(m.entryTime.bitPattern)
                store(m.visitSequence)
                store((m.hasDwelled ? dwelledFlag : 0) | (m.ordinal == nil ? 0 : ordinalFlag))
                if let ordinal = m.ordinal { store(ordinal) }
            }
        }
    }

    /// The encoding of `memberships`.
    static func encode(_ memberships: [DetectionEngine.MembershipSnapshot]) -> [UInt8] {
        var bytes: [UInt8] = []
        append(memberships, to: &bytes)
        return bytes
    }

    /// The memberships in `bytes`, in their stored order; refuses a wrong format, unknown flags, a
    /// count beyond the data, invalid UTF-8 and bytes left over.
    static func decode(_ bytes: [UInt8]) throws(OptionStateCodec.DecodingError) -> [DetectionEngine.MembershipSnapshot] {
        var r = OptionStateCodec.Reader(bytes: bytes)
        let version = try r.byte()
        guard version == format else { throw .init(description: "unknown presence format \(version)") }
        var memberships: [DetectionEngine.MembershipSnapshot] = []
        for _ in 0..<(try r.count(minimumSize: minimumMembershipSize)) {
            let fence = FenceID(try r.text())
            let entryTime = try r.f64()
            let visitSequence = try r.u64()
            let flags = try r.byte()
            guard flags & ~(dwelledFlag | ordinalFlag) == 0 else {
                throw .init(description: "unknown presence flags \(flags) for fence \(fence)")
            }
            let ordinal: UInt32? = flags & ordinalFlag != 0 ? UInt32(try r.u32()) : nil
            memberships.append(.init(fence: fence, entryTime: entryTime, visitSequence: visitSequence, ordinal: ordinal,
                                     hasDwelled: flags & dwelledFlag != 0))
        }
        guard r.offset == bytes.count else { throw .init(description: "\(bytes.count - r.offset) unexpected bytes at the end") }
        return memberships
    }
}
