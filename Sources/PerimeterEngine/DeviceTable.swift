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
/// Each bucket also holds a few bits of its id's hash (a *tag*) in the bits its slot number does not need,
/// so that a probe passes over another device's bucket on one masked compare, without reading that
/// device's record or comparing ids (at 1,000 devices a lookup met 0.76 such buckets on average).
///
/// An update's lookup (``DetectionEngine/resolve(deviceAt:)``) hashes an id of at most 15 ASCII bytes from
/// the two words of its string value (``inlineASCIIHash(_:)``, the same hash), and reads the id by
/// address, never copying it: the common case costs no string call and no retain.
///
/// Memory: the table holds at most three ids per four buckets and grows by half when full, so it never
/// drops below one id per two buckets — at most 8 bytes per device (4 to 8), on top of its 48-byte
/// ``DeviceRecord``. Bucket counts are therefore not powers of two; a hash is mapped to a bucket by
/// multiplying (the high word of hash × count), which costs no more than a mask.
struct DeviceTable: Sendable {
    /// Per bucket: the device slot plus one in the low ``slotBits`` bits, the tag of its id's hash in the
    /// others; 0 marks an empty bucket.
    private var buckets: [UInt32] = []
    /// The bits of a bucket that hold its slot plus one: enough for every slot added so far (forgotten
    /// devices' slots are not reused, so slots may outnumber buckets) and for the bucket count.
    private var slotBits = 0
    /// The bits of a bucket that hold its tag: those above ``slotBits``.
    private var tagMask: UInt32 = 0
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
        // The bytes are read in place, borrowed (native strings, small ones included, are contiguous):
        // `withUTF8` needs a copy of the string to mutate, which cost a retain and a release per update.
        let result = id.rawValue.utf8.withContiguousStorageIfAvailable { hashBytes(UnsafeRawBufferPointer($0)) }
            ?? hashOfCopy(id.rawValue)
        return result.isASCII ? result.hash : hashOfCanonicalForm(id.rawValue)
    }

    /// ``hash(_:)`` of an id of at most 15 ASCII bytes, read from the two words of its string value
    /// instead of through the string's API; `nil` for any other id.
    ///
    /// A string that short is stored in its value: bytes 0–7 in the first word, bytes 8–14 in the low
    /// seven bytes of the second, the top byte of which is `0xE0` plus the count for ASCII text, and the
    /// unused bytes zero — the words ``hashBytes(_:)`` reads for such text (whole words, then the tail
    /// zero-extended). Reaching the bytes through `utf8.withContiguousStorageIfAvailable` cost ≈ 47
    /// instructions per update (the representation checks, a copy to the stack, the tail's loads); this
    /// costs ≈ 12.
    ///
    /// That layout is the standard library's representation, not its interface, so the result is only
    /// where a lookup looks first: a lookup that misses with it looks again with ``hash(_:)`` before it
    /// adds a device, and a slot is only ever found by comparing ids. A changed representation would cost
    /// speed, never a wrong slot; `DeviceTableTests` checks this hash against ``hash(_:)``.
    @inline(__always)
    static func inlineASCIIHash(_ id: DeviceID) -> UInt64? {
        guard MemoryLayout<DeviceID>.size == 16 else { return nil }
        let (low, high) = unsafeBitCast(id, to: (UInt64, UInt64).self)
        let top = high >> 56
        guard top & 0xF0 == 0xE0 else { return nil }
        let n = top & 0x0F
        var h: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ n
        if n != 0 { h = mix(h ^ low) }
        if n > 8 { h = mix(h ^ (high & 0x00FF_FFFF_FFFF_FFFF)) }
        return h ^ (h >> 29)
    }

    /// ``hashBytes(_:)`` of a string whose bytes are not contiguous (a bridged one).
    private static func hashOfCopy(_ text: String) -> (hash: UInt64, isASCII: Bool) {
        var copy = text
        return copy.withUTF8 { hashBytes(UnsafeRawBufferPointer($0)) }
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

    /// The tag bits of `hash` in a bucket, under ``tagMask``.
    @inline(__always)
    private func tag(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash) & tagMask }

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
            let wanted = tag(hash), mask = tagMask
            var b = Self.home(hash, n)
            while true {
                let entry = buckets[b]
                if entry == 0 { return nil }
                if entry & mask == wanted {
                    let slot = Int(entry & ~mask) - 1
                    if devices[slot].id == id { return Int32(slot) }
                }
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
        if (count + 1) * Self.maximumLoad.denominator > buckets.count * Self.maximumLoad.numerator {
            grow(in: devices)
        } else if Int(slot) + 1 >= 1 << slotBits {
            rebuild(bucketCount: buckets.count, in: devices)  // more slots than the slot bits hold
        }
        place(slot, hash: hash)
        count += 1
    }

    /// Removes `id`; returns its slot, or `nil` when the table did not hold it.
    /// - Complexity: O(1) expected (the entries after it in its run are moved back).
    @discardableResult
    mutating func remove(_ id: DeviceID, in devices: [DeviceRecord]) -> Int32? {
        guard !buckets.isEmpty else { return nil }
        let n = buckets.count
        let hash = Self.hash(id)
        let wanted = tag(hash)
        var b = Self.home(hash, n)
        while true {
            let entry = buckets[b]
            if entry == 0 { return nil }
            if entry & tagMask == wanted, devices[slot(inBucket: entry)].id == id { break }
            b = b + 1 == n ? 0 : b + 1
        }
        let removed = Int32(slot(inBucket: buckets[b]))
        // Backward-shift deletion: move each later entry of the run into the hole when its home bucket
        // does not lie cyclically after the hole, so every lookup still finds it without tombstones.
        @inline(__always) func distance(_ from: Int, _ to: Int) -> Int { to >= from ? to - from : to + n - from }
        var hole = b
        var next = hole + 1 == n ? 0 : hole + 1
        while buckets[next] != 0 {
            let home = Self.home(Self.hash(devices[slot(inBucket: buckets[next])].id), n)
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
        slotBits = 0
        tagMask = 0
        count = 0
    }

    /// The slot a non-empty bucket holds.
    @inline(__always)
    private func slot(inBucket entry: UInt32) -> Int { Int(entry & ~tagMask) - 1 }

    private mutating func place(_ slot: Int32, hash: UInt64) {
        let n = buckets.count
        var b = Self.home(hash, n)
        while buckets[b] != 0 { b = b + 1 == n ? 0 : b + 1 }
        buckets[b] = (UInt32(slot) + 1) | tag(hash)
    }

    private mutating func grow(in devices: [DeviceRecord]) {
        rebuild(bucketCount: Self.grownCount(from: buckets.count), in: devices)
    }

    /// Places every id again in `bucketCount` buckets (at least), with slot bits for the bucket count
    /// and for a slot after every one in use.
    private mutating func rebuild(bucketCount: Int, in devices: [DeviceRecord]) {
        let old = buckets, oldMask = tagMask
        buckets = Array(repeating: 0, count: bucketCount)
        buckets.append(contentsOf: repeatElement(0, count: buckets.capacity - buckets.count))
        // Room for slot numbers up to twice those in use, so that adding devices rebuilds rarely.
        let largest = max(buckets.count, 2 * (devices.count + 1))
        slotBits = min(32, Int.bitWidth - largest.leadingZeroBitCount)
        tagMask = slotBits >= 32 ? 0 : ~UInt32(0) << UInt32(slotBits)
        for entry in old where entry != 0 {
            let slot = Int(entry & ~oldMask) - 1
            place(Int32(slot), hash: Self.hash(devices[slot].id))
        }
    }
}
