import PerimeterEngine
import PerimeterFences
import PerimeterGeometry

/// The binary form of a device's option and stream state (the `device_option.state` column).
///
/// Little-endian, doubles as their IEEE bit patterns (so every value round-trips bit for bit):
/// a format byte (1), a flags byte (1: option state follows, 2: stream state follows), then
/// - option state: last sequence (i64), anchor (fix?), pending count (u32) × (fence, to-inside u8,
///   since, observed at, latitude, longitude, sequence u64), repeat count (u32) × (fence, visit u64, count i64);
/// - stream state: newest (f64), buffered count (u32) × (fix?, arrival u64), recent count (u32) ×
///   (time, latitude, longitude);
///
/// where a fence is a u32 byte count and UTF-8, and a fix? is a presence byte then time, latitude,
/// longitude and an optional accuracy (presence byte, f64).
enum OptionStateCodec {
    static let format: UInt8 = 1

    /// Why stored bytes could not be decoded.
    struct DecodingError: Error, CustomStringConvertible {
        var description: String
    }

    // MARK: Encoding

    static func encode(options: DetectionEngine.DeviceOptionSnapshot?,
                       stream: DetectionEngine.DeviceStreamSnapshot?) -> [UInt8] {
        var w = Writer()
        w.bytes.reserveCapacity(64 + (stream?.recent.count ?? 0) * 24)
        w.byte(format)
        w.byte((options == nil ? 0 : 1) | (stream == nil ? 0 : 2))
        if let o = options {
            w.u64(UInt64(bitPattern: o.lastSequence))
            w.fix(o.anchor)
            w.u32(o.pending.count)
            for p in o.pending {
                w.text(p.fence.rawValue)
                w.byte(p.toInside ? 1 : 0)
                w.f64(p.since)
                w.f64(p.observedAt)
                w.f64(p.coordinate.latitude)
                w.f64(p.coordinate.longitude)
                w.u64(p.sequence)
            }
            w.u32(o.dwellRepeats.count)
            for r in o.dwellRepeats {
                w.text(r.fence.rawValue)
                w.u64(r.visitSequence)
                w.u64(UInt64(bitPattern: Int64(r.count)))
            }
        }
        if let s = stream {
            w.f64(s.newest)
            w.u32(s.buffered.count)
            for b in s.buffered {
                w.fix(b.fix)
                w.u64(b.arrival)
            }
            w.u32(s.recent.count)
            for r in s.recent {
                w.f64(r.time)
                w.f64(r.coordinate.latitude)
                w.f64(r.coordinate.longitude)
            }
        }
        return w.bytes
    }

    struct Writer {
        var bytes: [UInt8] = []

        mutating func byte(_ value: UInt8) { bytes.append(value) }
        mutating func u64(_ value: UInt64) {
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        mutating func u32(_ value: Int) {
            let v = UInt32(truncatingIfNeeded: value)
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(shift))) }
        }
        mutating func f64(_ value: Double) { u64(value.bitPattern) }
        mutating func text(_ value: String) {
            u32(value.utf8.count)
            bytes.append(contentsOf: value.utf8)
        }
        mutating func fix(_ value: DetectionEngine.FixSnapshot?) {
            guard let value else { return byte(0) }
            byte(1)
            f64(value.time)
            f64(value.coordinate.latitude)
            f64(value.coordinate.longitude)
            if let accuracy = value.accuracy {
                byte(1)
                f64(accuracy)
            } else {
                byte(0)
            }
        }
    }

    // MARK: Decoding

    static func decode(_ bytes: [UInt8]) throws(DecodingError)
        -> (options: DetectionEngine.DeviceOptionSnapshot?, stream: DetectionEngine.DeviceStreamSnapshot?) {
        var r = Reader(bytes: bytes)
        let version = try r.byte()
        guard version == format else { throw DecodingError(description: "unknown option state format \(version)") }
        let flags = try r.byte()
        guard flags & ~3 == 0 else { throw DecodingError(description: "unknown option state flags \(flags)") }
        var options: DetectionEngine.DeviceOptionSnapshot?
        var stream: DetectionEngine.DeviceStreamSnapshot?
        if flags & 1 != 0 {
            var o = DetectionEngine.DeviceOptionSnapshot()
            o.lastSequence = Int64(bitPattern: try r.u64())
            o.anchor = try r.fix()
            for _ in 0..<(try r.count(minimumSize: 45)) {
                let fence = FenceID(try r.text())
                let toInside = try r.byte() != 0
                let since = try r.f64(), observedAt = try r.f64()
                let coordinate = Coordinate(latitude: try r.f64(), longitude: try r.f64())
                o.pending.append(.init(fence: fence, toInside: toInside, since: since, observedAt: observedAt,
                                       coordinate: coordinate, sequence: try r.u64()))
            }
            for _ in 0..<(try r.count(minimumSize: 20)) {
                let fence = FenceID(try r.text())
                let visit = try r.u64()
                let count = Int64(bitPattern: try r.u64())
                guard let value = Int(exactly: count) else { throw DecodingError(description: "repeat count out of range") }
                o.dwellRepeats.append(.init(fence: fence, visitSequence: visit, count: value))
            }
            options = o
        }
        if flags & 2 != 0 {
            var s = DetectionEngine.DeviceStreamSnapshot()
            s.newest = try r.f64()
            for _ in 0..<(try r.count(minimumSize: 9)) {
                guard let fix = try r.fix() else { throw DecodingError(description: "a buffered update has no fix") }
                s.buffered.append(.init(fix: fix, arrival: try r.u64()))
            }
            for _ in 0..<(try r.count(minimumSize: 24)) {
                let time = try r.f64()
                s.recent.append(.init(time: time, coordinate: Coordinate(latitude: try r.f64(), longitude: try r.f64()),
                                      accuracy: nil))
            }
            stream = s
        }
        guard r.offset == bytes.count else {
            throw DecodingError(description: "\(bytes.count - r.offset) unexpected bytes at the end")
        }
        return (options, stream)
    }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        mutating func take(_ n: Int) throws(DecodingError) -> ArraySlice<UInt8> {
            guard n >= 0, bytes.count - offset >= n else {
                throw DecodingError(description: "truncated at byte \(offset) of \(bytes.count)")
            }
            defer { offset += n }
            return bytes[offset..<offset + n]
        }
        mutating func byte() throws(DecodingError) -> UInt8 { try take(1).first ?? 0 }
        mutating func u64() throws(DecodingError) -> UInt64 {
            try take(8).reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        mutating func u32() throws(DecodingError) -> Int {
            Int(try take(4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        /// An element count, checked against the bytes left so a damaged count cannot allocate wildly.
        mutating func count(minimumSize: Int) throws(DecodingError) -> Int {
            let n = try u32()
            guard n <= (bytes.count - offset) / minimumSize else {
                throw DecodingError(description: "count \(n) at byte \(offset - 4) exceeds the data")
            }
            return n
        }
        mutating func f64() throws(DecodingError) -> Double { Double(bitPattern: try u64()) }
        mutating func text() throws(DecodingError) -> String {
            let n = try u32()
            guard let text = String(validating: try take(n), as: UTF8.self) else {
                throw DecodingError(description: "invalid UTF-8 at byte \(offset - n)")
            }
            return text
        }
        mutating func fix() throws(DecodingError) -> DetectionEngine.FixSnapshot? {
            guard try byte() != 0 else { return nil }
            let time = try f64()
            let coordinate = Coordinate(latitude: try f64(), longitude: try f64())
            let accuracy: Double? = try byte() != 0 ? try f64() : nil
            return .init(time: time, coordinate: coordinate, accuracy: accuracy)
        }
    }
}

/// The binary form of a device's instant visits (the `device.instant_visits` column): a format byte (1),
/// a count (u32), then per visit the fence (u32 byte count and UTF-8), the instant (f64 bit pattern)
/// and the ordinal (u32), all little-endian.
enum InstantVisitCodec {
    static let format: UInt8 = 1

    static func encode(_ visits: [DetectionEngine.InstantVisitSnapshot]) -> [UInt8] {
        var w = OptionStateCodec.Writer()
        w.byte(format)
        w.u32(visits.count)
        for visit in visits {
            w.text(visit.fence.rawValue)
            w.f64(visit.entryTime)
            w.u32(Int(visit.ordinal))
        }
        return w.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(OptionStateCodec.DecodingError) -> [DetectionEngine.InstantVisitSnapshot] {
        var r = OptionStateCodec.Reader(bytes: bytes)
        let version = try r.byte()
        guard version == format else { throw .init(description: "unknown instant visit format \(version)") }
        var visits: [DetectionEngine.InstantVisitSnapshot] = []
        for _ in 0..<(try r.count(minimumSize: 16)) {
            let fence = FenceID(try r.text())
            let entryTime = try r.f64()
            visits.append(.init(fence: fence, entryTime: entryTime, ordinal: UInt32(try r.u32())))
        }
        guard r.offset == bytes.count else { throw .init(description: "\(bytes.count - r.offset) unexpected bytes at the end") }
        return visits
    }
}
