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
///
/// Memory: the table holds at most three ids per four buckets and grows by half when full, so it never
/// drops below one id per two buckets — at most 8 bytes per device (4 to 8), on top of its 48-byte
/// ``DeviceRecord``. Bucket counts are therefore not powers of two; a hash is mapped to a bucket by
/// multiplying (the high word of hash × count), which costs no more than a mask.
struct DeviceTable: Sendable {
    /// Per bucket: the device slot plus one; 0 marks an empty bucket.
    private var buckets: [UInt32] = []
    /// Number of ids in the table.
    private(set) var count = 0

    /// Bytes the buckets occupy (for memory accounting).
    var bucketBytes: Int { buckets.capacity * MemoryLayout<UInt32>.stride }

    /// The largest share of the buckets the table fills before it grows, as a fraction (3/4).
    static let maximumLoad = (numerator: 3, denominator: 4)
    /// Bucket count asked for when growing from `n` buckets: half as many again, less what the
    /// allocator may round the array up by (every bucket it gives is used), 16 at first. The margin:
    /// up to 4 buckets for small arrays (size classes 16 bytes apart); up to 8 from 1 KiB, where a
    /// reused free block whose remainder is too small to split (under 32 bytes) is handed out whole —
    /// so which tests ran before in the same process changed the count; a page for an array it maps.
    static func grownCount(from n: Int) -> Int {
        max(16, n + n / 2 - (n >= 16_384 ? 1_028 : n >= 256 ? 8 : 4))
    }

    /// The hash of `id`, equal for canonically equivalent ids.
    @inline(__always)
    static func hash(_ id: DeviceID) -> UInt64 {
        // `withUTF8` on a copy of the string (a retain; native strings are not rewritten): reading the
        // bytes through `utf8.withContiguousStorageIfAvailable` made the compiler copy the whole
        // `LocationUpdate` the id came from, through its value witness.
        var text = id.rawValue
        let (hash, isASCII) = text.withUTF8 { hashBytes(UnsafeRawBufferPointer($0)) }
        return isASCII ? hash : hashOfCanonicalForm(id.rawValue)
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

    /// The bucket a hash starts probing at, in `0..<bucketCount`.
    @inline(__always)
    private static func home(_ hash: UInt64, _ bucketCount: Int) -> Int {
        Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(bucketCount)).high)
    }

    /// The slot of `id`, whose hash is `hash`, if the table holds it.
    /// - Complexity: O(1) expected.
    @inline(__always)
    func slot(of id: DeviceID, hash: UInt64, in devices: [DeviceRecord]) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        return buckets.withUnsafeBufferPointer { buckets in
            let n = buckets.count
            var b = Self.home(hash, n)
            while true {
                let entry = buckets[b]
                if entry == 0 { return nil }
                let slot = Int(entry) - 1
                if devices[slot].id == id { return Int32(slot) }
                b += 1
                if b == n { b = 0 }
            }
        }
    }

    /// The slot of `id`, if the table holds it.
    func slot(of id: DeviceID, in devices: [DeviceRecord]) -> Int32? {
        slot(of: id, hash: Self.hash(id), in: devices)
    }

    /// Adds `slot`, whose device (in `devices`) has an id with hash `hash` that the table does not hold.
    /// - Complexity: O(1) amortised.
    mutating func insert(_ slot: Int32, hash: UInt64, in devices: [DeviceRecord]) {
        if (count + 1) * Self.maximumLoad.denominator > buckets.count * Self.maximumLoad.numerator { grow(in: devices) }
        place(slot, hash: hash)
        count += 1
    }

    /// Removes `id`; returns its slot, or `nil` when the table did not hold it.
    /// - Complexity: O(1) expected (the entries after it in its run are moved back).
    @discardableResult
    mutating func remove(_ id: DeviceID, in devices: [DeviceRecord]) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        let n = buckets.count
        var b = Self.home(Self.hash(id), n)
        while true {
            let entry = buckets[b]
            if entry == 0 { return nil }
            if devices[Int(entry) - 1].id == id { break }
            b = b + 1 == n ? 0 : b + 1
        }
        let removed = Int32(buckets[b]) - 1
        // Backward-shift deletion: move each later entry of the run into the hole when its home bucket
        // does not lie cyclically after the hole, so every lookup still finds it without tombstones.
        @inline(__always) func distance(_ from: Int, _ to: Int) -> Int { to >= from ? to - from : to + n - from }
        var hole = b
        var next = hole + 1 == n ? 0 : hole + 1
        while buckets[next] != 0 {
            let home = Self.home(Self.hash(devices[Int(buckets[next]) - 1].id), n)
            if distance(home, hole) < distance(home, next) {
                buckets[hole] = buckets[next]
                hole = next
            }
            next = next + 1 == n ? 0 : next + 1
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
        let n = buckets.count
        var b = Self.home(hash, n)
        while buckets[b] != 0 { b = b + 1 == n ? 0 : b + 1 }
        buckets[b] = UInt32(slot) + 1
    }

    private mutating func grow(in devices: [DeviceRecord]) {
        let old = buckets
        buckets = Array(repeating: 0, count: Self.grownCount(from: old.count))
        buckets.append(contentsOf: repeatElement(0, count: buckets.capacity - buckets.count))
        for entry in old where entry != 0 {
            place(Int32(entry - 1), hash: Self.hash(devices[Int(entry) - 1].id))
        }
    }
}
