import Foundation

/// The (fix, fence) pairs an engine found, sorted by fix then fence: what every peer must agree on.
public struct PairList: Equatable, Sendable {
    /// Fix numbers (positions in the stream), ascending.
    public var fix: [UInt32] = []
    /// Fence numbers, ascending within a fix.
    public var fence: [UInt32] = []

    /// An empty list.
    public init() {}

    /// Number of pairs.
    public var count: Int { fix.count }

    /// Appends one pair; callers append in (fix, fence) order.
    @inlinable
    public mutating func append(fix f: UInt32, fence g: UInt32) {
        fix.append(f)
        fence.append(g)
    }

    /// Reads pairs written as little-endian `<u32 fix><u32 fence>` records, sorting them.
    public static func read(contentsOf url: URL) throws -> PairList {
        let data = try Data(contentsOf: url)
        guard data.count % 8 == 0 else {
            throw WorkloadFiles.ReadError(description: "\(url.path): size \(data.count) is not a multiple of 8")
        }
        var rows: [UInt64] = []
        rows.reserveCapacity(data.count / 8)
        data.withUnsafeBytes { raw in
            for i in 0..<(data.count / 8) {
                let f = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8, as: UInt32.self))
                let g = UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i * 8 + 4, as: UInt32.self))
                rows.append(UInt64(f) << 32 | UInt64(g))
            }
        }
        rows.sort()
        var list = PairList()
        for r in rows { list.append(fix: UInt32(r >> 32), fence: UInt32(truncatingIfNeeded: r)) }
        return list
    }

    /// The pairs whose fix number is below `n`.
    public func prefix(fixes n: Int) -> PairList {
        var end = 0
        while end < fix.count && Int(fix[end]) < n { end += 1 }
        var list = PairList()
        list.fix = Array(fix[..<end])
        list.fence = Array(fence[..<end])
        return list
    }

    /// `nil` when equal, else a description of the first difference.
    public func difference(from other: PairList, otherName: String) -> String? {
        if self == other { return nil }
        var i = 0
        while i < count && i < other.count && fix[i] == other.fix[i] && fence[i] == other.fence[i] { i += 1 }
        func show(_ l: PairList, _ k: Int) -> String { k < l.count ? "(fix \(l.fix[k]), fence \(l.fence[k]))" : "end" }
        return "\(count) pairs vs \(otherName)'s \(other.count); first difference at pair \(i): \(show(self, i)) vs \(show(other, i))"
    }

    /// Entry and exit counts implied by the pairs for a stream of `devices` (entry: inside now and not
    /// at the device's previous fix, the first fix included; exit: the reverse).
    public func eventCounts(devices: [UInt32]) -> (entries: Int, exits: Int) {
        var previous: [UInt32: [UInt32]] = [:]
        var entries = 0, exits = 0, k = 0
        var current: [UInt32] = []
        for (i, d) in devices.enumerated() {
            current.removeAll(keepingCapacity: true)
            while k < count && Int(fix[k]) == i { current.append(fence[k]); k += 1 }
            let before = previous[d] ?? []
            if before != current {
                let a = Set(before), b = Set(current)
                entries += b.subtracting(a).count
                exits += a.subtracting(b).count
                previous[d] = current
            }
        }
        return (entries, exits)
    }
}
