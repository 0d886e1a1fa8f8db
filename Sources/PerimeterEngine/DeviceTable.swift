import Foundation

/// Device ids to device slots: an open-addressing table (linear probing) whose buckets hold only
/// slot numbers, 4 bytes each; the ids themselves live in the device states the slots point to.
///
/// Why not `[DeviceID: Int32]`: hashing a `String` with the standard library's seeded SipHash and
/// storing a 16-byte key plus the value per bucket cost about a fifth of an update's time and a
/// third of an idle device's memory. Here an ASCII id (the common case) is hashed eight bytes at a
/// time, and a lookup compares ids only in the state it reads next anyway.
///
/// Ids are equal when their text is canonically equivalent (Swift's `String ==`), so the hash must
/// not tell such ids apart: it is computed over the id's UTF-8 bytes when they are ASCII and over its
/// canonical composition (NFC) otherwise — ASCII text is its own NFC, so an id that is not ASCII but
/// equivalent to ASCII text (a Kelvin sign for `K`) lands in the same bucket as that text.
struct DeviceTable: Sendable {
    /// Per bucket: the device slot plus one; 0 marks an empty bucket. The count is a power of two.
    private var buckets: [UInt32] = []
    /// Number of ids in the table.
    private(set) var count = 0

    /// Bytes the buckets occupy (for memory accounting).
    var bucketBytes: Int { buckets.capacity * MemoryLayout<UInt32>.stride }

    /// The hash of `id`, equal for canonically equivalent ids.
    @inline(__always)
    static func hash(_ id: DeviceID) -> UInt64 {
        let ascii = id.rawValue.utf8.withContiguousStorageIfAvailable { bytes -> UInt64? in
            let (hash, isASCII) = hashBytes(UnsafeRawBufferPointer(bytes))
            return isASCII ? hash : nil
        }
        if let ascii, let hash = ascii { return hash }
        return hashOfCanonicalForm(id.rawValue)
    }

    private static func hashOfCanonicalForm(_ text: String) -> UInt64 {
        var canonical = text.precomposedStringWithCanonicalMapping
        return canonical.withUTF8 { hashBytes(UnsafeRawBufferPointer($0)).hash }
    }

    /// A 64-bit hash of `bytes`, eight at a time, and whether they are all ASCII.
    @inline(__always)
    private static func hashBytes(_ bytes: UnsafeRawBufferPointer) -> (hash: UInt64, isASCII: Bool) {
        let n = bytes.count
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(truncatingIfNeeded: n)
        var high: UInt64 = 0
        var i = 0
        while i + 8 <= n {
            let word = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            high |= word
            h = mix(h ^ word)
            i += 8
        }
        if i < n {
            let word = bytes.littleEndianTail(from: i)
            high |= word
            h = mix(h ^ word)
        }
        return (h ^ (h >> 29), high & 0x8080_8080_8080_8080 == 0)
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        let z = value &* 0xBF58_476D_1CE4_E5B9
        return (z ^ (z >> 31)) &* 0x94D0_49BB_1331_11EB
    }

    /// The slot of `id`, whose hash is `hash`, if the table holds it.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func slot(of id: DeviceID, hash: UInt64, in devices: [DeviceState]) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        return buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var b = Int(truncatingIfNeeded: hash) & mask
            while true {
                let entry = buckets[b]
                if entry == 0 { return nil }
                let slot = Int(entry) - 1
                if devices[slot].id == id { return Int32(slot) }
                b = (b + 1) & mask
            }
        }
    }

    /// The slot of `id`, if the table holds it.
    func slot(of id: DeviceID, in devices: [DeviceState]) -> Int32? {
        slot(of: id, hash: Self.hash(id), in: devices)
    }

    /// Adds `slot`, whose device (in `devices`) has an id with hash `hash` that the table does not hold.
    /// - Complexity: O(1) amortised.
    mutating func insert(_ slot: Int32, hash: UInt64, in devices: [DeviceState]) {
        if (count + 1) * 4 > buckets.count * 3 { grow(in: devices) }
        place(slot, hash: hash)
        count += 1
    }

    /// Removes `id`; returns its slot, or `nil` when the table did not hold it.
    /// - Complexity: O(1) expected (the entries after it in its run are moved back).
    @discardableResult
    mutating func remove(_ id: DeviceID, in devices: [DeviceState]) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        let mask = buckets.count - 1
        var b = Int(truncatingIfNeeded: Self.hash(id)) & mask
        while true {
            let entry = buckets[b]
            if entry == 0 { return nil }
            if devices[Int(entry) - 1].id == id { break }
            b = (b + 1) & mask
        }
        let removed = Int32(buckets[b]) - 1
        // Backward-shift deletion: move each later entry of the run into the hole when its home bucket
        // does not lie cyclically after the hole, so every lookup still finds it without tombstones.
        var hole = b
        var next = (hole + 1) & mask
        while buckets[next] != 0 {
            let home = Int(truncatingIfNeeded: Self.hash(devices[Int(buckets[next]) - 1].id)) & mask
            let distanceToNext = (next - home) & mask, distanceToHole = (hole - home) & mask
            if distanceToHole < distanceToNext {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        buckets[hole] = 0
        count -= 1
        return removed
    }

    /// Empties the table.
    mutating func removeAll() {
        buckets = []
        count = 0
    }

    private mutating func place(_ slot: Int32, hash: UInt64) {
        let mask = buckets.count - 1
        var b = Int(truncatingIfNeeded: hash) & mask
        while buckets[b] != 0 { b = (b + 1) & mask }
        buckets[b] = UInt32(slot) + 1
    }

    private mutating func grow(in devices: [DeviceState]) {
        let old = buckets
        buckets = Array(repeating: 0, count: max(16, old.count * 2))
        for entry in old where entry != 0 {
            place(Int32(entry - 1), hash: Self.hash(devices[Int(entry) - 1].id))
        }
    }
}
