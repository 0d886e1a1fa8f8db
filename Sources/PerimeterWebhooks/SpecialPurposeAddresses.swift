/// The special-purpose address ranges the SSRF guard (``TargetAddressPolicy``) judges addresses by.
///
/// The rows are the facts of the IANA "IPv4 Special-Purpose Address Registry" and "IPv6
/// Special-Purpose Address Registry" (iana-ipv4-special-registry, iana-ipv6-special-registry): each
/// range, its name, and whether the registry marks it globally reachable. A few ranges outside those
/// registries that a webhook must not reach either follow them, marked as such (multicast from the
/// IANA multicast address registries, deprecated site-local and IPv4-compatible IPv6 from RFC 4291).
///
/// An address is judged by the most specific row that contains it: refused when that row is not
/// globally reachable, accepted when it is (192.0.0.9, the PCP anycast address, is reachable although
/// 192.0.0.0/24 is not), and accepted when no row contains it. Rows whose addresses embed an IPv4
/// address (IPv4-mapped, NAT64, 6to4, Teredo) are judged by the embedded address instead: the
/// registry marks them "N/A" or reachable, and where the packets end up is decided by the IPv4 address.
enum SpecialPurposeAddresses {
    /// How an IPv6 range carries an IPv4 address.
    enum Embedding: Hashable, Sendable {
        /// In the last 32 bits (IPv4-mapped ::ffff:0:0/96, NAT64 64:ff9b::/96).
        case last32
        /// In bits 16…47 (6to4, RFC 3056).
        case sixToFour
        /// The server in bits 32…63 and the client, inverted, in the last 32 bits (Teredo, RFC 4380).
        case teredo
    }

    /// One IPv4 range.
    struct IPv4Row: Hashable, Sendable {
        var address: UInt32
        var length: Int
        var name: String
        /// The registry's "Globally Reachable" column.
        var globallyReachable: Bool
        /// Whether the row is from the IANA IPv4 Special-Purpose Address Registry (else it is one of the
        /// few extra ranges the guard refuses).
        var inRegistry: Bool = true

        init(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, _ length: Int, _ name: String, reachable: Bool,
             inRegistry: Bool = true) {
            address = UInt32(a) << 24 | UInt32(b) << 16 | UInt32(c) << 8 | UInt32(d)
            self.length = length
            self.name = name
            globallyReachable = reachable
            self.inRegistry = inRegistry
        }

        var mask: UInt32 { length == 0 ? 0 : ~UInt32(0) << UInt32(32 - length) }
        func contains(_ a: UInt32) -> Bool { a & mask == address }
        /// The range in CIDR notation.
        var text: String { "\(SpecialPurposeAddresses.text(ipv4: address))/\(length)" }
    }

    /// A 128-bit IPv6 address as two 64-bit halves.
    struct IPv6: Hashable, Sendable {
        var high: UInt64
        var low: UInt64

        /// From up to eight 16-bit groups, the rest zero (`IPv6(0x2001, 0xdb8)` is 2001:db8::).
        init(_ groups: UInt16...) {
            let words = Array((groups + [UInt16](repeating: 0, count: 8)).prefix(8))
            high = words[0..<4].reduce(0) { $0 << 16 | UInt64($1) }
            low = words[4..<8].reduce(0) { $0 << 16 | UInt64($1) }
        }

        init(high: UInt64, low: UInt64) {
            self.high = high
            self.low = low
        }

        func masked(_ length: Int) -> IPv6 {
            let highMask: UInt64 = length >= 64 ? ~0 : (length == 0 ? 0 : ~UInt64(0) << UInt64(64 - length))
            let lowMask: UInt64 = length <= 64 ? 0 : (length >= 128 ? ~0 : ~UInt64(0) << UInt64(128 - length))
            return IPv6(high: high & highMask, low: low & lowMask)
        }

        /// The address in the usual colon notation (longest zero run compressed).
        var text: String {
            let groups = (0..<8).map { i -> UInt16 in
                UInt16(truncatingIfNeeded: (i < 4 ? high : low) >> UInt64(48 - 16 * (i % 4)))
            }
            var bestStart = -1, bestLength = 1, start = -1
            for i in 0...8 {
                if i < 8 && groups[i] == 0 {
                    if start < 0 { start = i }
                } else if start >= 0 {
                    if i - start > bestLength { bestStart = start; bestLength = i - start }
                    start = -1
                }
            }
            func hex(_ range: Range<Int>) -> String { range.map { String(groups[$0], radix: 16) }.joined(separator: ":") }
            guard bestStart >= 0 else { return hex(0..<8) }
            return hex(0..<bestStart) + "::" + hex((bestStart + bestLength)..<8)
        }
    }

    /// One IPv6 range.
    struct IPv6Row: Hashable, Sendable {
        var address: IPv6
        var length: Int
        var name: String
        /// The registry's "Globally Reachable" column; `nil` where it says "N/A".
        var globallyReachable: Bool?
        /// Where an embedded IPv4 address sits, for ranges judged by it.
        var embedding: Embedding?
        /// Whether the row is from the IANA IPv6 Special-Purpose Address Registry.
        var inRegistry: Bool = true

        init(_ address: IPv6, _ length: Int, _ name: String, reachable: Bool?, embedding: Embedding? = nil,
             inRegistry: Bool = true) {
            self.address = address
            self.length = length
            self.name = name
            globallyReachable = reachable
            self.embedding = embedding
            self.inRegistry = inRegistry
        }

        func contains(_ a: IPv6) -> Bool { a.masked(length) == address }
        /// The range in CIDR notation.
        var text: String { "\(address.text)/\(length)" }
    }

    /// The IANA IPv4 Special-Purpose Address Registry, then the extra IPv4 ranges the guard refuses.
    static let ipv4: [IPv4Row] = [
        IPv4Row(0, 0, 0, 0, 8, "\"this network\"", reachable: false),
        IPv4Row(0, 0, 0, 0, 32, "\"this host on this network\"", reachable: false),
        IPv4Row(10, 0, 0, 0, 8, "private-use", reachable: false),
        IPv4Row(100, 64, 0, 0, 10, "shared address space (carrier-grade NAT)", reachable: false),
        IPv4Row(127, 0, 0, 0, 8, "loopback", reachable: false),
        IPv4Row(169, 254, 0, 0, 16, "link-local (cloud metadata endpoints live here)", reachable: false),
        IPv4Row(172, 16, 0, 0, 12, "private-use", reachable: false),
        IPv4Row(192, 0, 0, 0, 24, "IETF protocol assignments", reachable: false),
        IPv4Row(192, 0, 0, 0, 29, "IPv4 service continuity prefix", reachable: false),
        IPv4Row(192, 0, 0, 8, 32, "IPv4 dummy address", reachable: false),
        IPv4Row(192, 0, 0, 9, 32, "Port Control Protocol anycast", reachable: true),
        IPv4Row(192, 0, 0, 10, 32, "Traversal Using Relays around NAT anycast", reachable: true),
        IPv4Row(192, 0, 0, 170, 32, "NAT64/DNS64 discovery", reachable: false),
        IPv4Row(192, 0, 0, 171, 32, "NAT64/DNS64 discovery", reachable: false),
        IPv4Row(192, 0, 2, 0, 24, "documentation (TEST-NET-1)", reachable: false),
        IPv4Row(192, 31, 196, 0, 24, "AS112-v4", reachable: true),
        IPv4Row(192, 52, 193, 0, 24, "AMT", reachable: true),
        IPv4Row(192, 88, 99, 0, 24, "deprecated 6to4 relay anycast", reachable: false),
        IPv4Row(192, 168, 0, 0, 16, "private-use", reachable: false),
        IPv4Row(192, 175, 48, 0, 24, "direct delegation AS112 service", reachable: true),
        IPv4Row(198, 18, 0, 0, 15, "benchmarking", reachable: false),
        IPv4Row(198, 51, 100, 0, 24, "documentation (TEST-NET-2)", reachable: false),
        IPv4Row(203, 0, 113, 0, 24, "documentation (TEST-NET-3)", reachable: false),
        IPv4Row(240, 0, 0, 0, 4, "reserved", reachable: false),
        IPv4Row(255, 255, 255, 255, 32, "limited broadcast", reachable: false),
        // Beyond the registry: multicast (IANA IPv4 Multicast Address Space Registry, RFC 5771).
        IPv4Row(224, 0, 0, 0, 4, "multicast", reachable: false, inRegistry: false),
    ]

    /// The IANA IPv6 Special-Purpose Address Registry, then the extra IPv6 ranges the guard refuses.
    static let ipv6: [IPv6Row] = [
        IPv6Row(IPv6(), 128, "unspecified", reachable: false),
        IPv6Row(IPv6(0, 0, 0, 0, 0, 0, 0, 1), 128, "loopback", reachable: false),
        IPv6Row(IPv6(0, 0, 0, 0, 0, 0xffff), 96, "IPv4-mapped", reachable: false, embedding: .last32),
        IPv6Row(IPv6(0x64, 0xff9b), 96, "IPv4-IPv6 translation (NAT64)", reachable: true, embedding: .last32),
        IPv6Row(IPv6(0x64, 0xff9b, 1), 48, "IPv4-IPv6 translation, local use", reachable: false),
        IPv6Row(IPv6(0x100), 64, "discard-only", reachable: false),
        IPv6Row(IPv6(0x100, 0, 0, 1), 64, "dummy IPv6 prefix", reachable: false),
        IPv6Row(IPv6(0x2001), 23, "IETF protocol assignments", reachable: false),
        IPv6Row(IPv6(0x2001), 32, "Teredo", reachable: nil, embedding: .teredo),
        IPv6Row(IPv6(0x2001, 1, 0, 0, 0, 0, 0, 1), 128, "Port Control Protocol anycast", reachable: true),
        IPv6Row(IPv6(0x2001, 1, 0, 0, 0, 0, 0, 2), 128, "Traversal Using Relays around NAT anycast", reachable: true),
        IPv6Row(IPv6(0x2001, 1, 0, 0, 0, 0, 0, 3), 128, "DNS-SD service registration protocol anycast", reachable: true),
        IPv6Row(IPv6(0x2001, 2), 48, "benchmarking", reachable: false),
        IPv6Row(IPv6(0x2001, 3), 32, "AMT", reachable: true),
        IPv6Row(IPv6(0x2001, 4, 0x112), 48, "AS112-v6", reachable: true),
        IPv6Row(IPv6(0x2001, 0x10), 28, "deprecated (previously ORCHID)", reachable: false),
        IPv6Row(IPv6(0x2001, 0x20), 28, "ORCHIDv2", reachable: true),
        IPv6Row(IPv6(0x2001, 0x30), 28, "drone remote ID protocol entity tags", reachable: true),
        IPv6Row(IPv6(0x2001, 0xdb8), 32, "documentation", reachable: false),
        IPv6Row(IPv6(0x2002), 16, "6to4", reachable: nil, embedding: .sixToFour),
        IPv6Row(IPv6(0x2620, 0x4f, 0x8000), 48, "direct delegation AS112 service", reachable: true),
        IPv6Row(IPv6(0x3fff), 20, "documentation", reachable: false),
        IPv6Row(IPv6(0x5f00), 16, "segment routing (SRv6) SIDs", reachable: false),
        IPv6Row(IPv6(0xfc00), 7, "unique-local", reachable: false),
        IPv6Row(IPv6(0xfe80), 10, "link-local unicast", reachable: false),
        // Beyond the registry: IPv4-compatible (deprecated, RFC 4291 2.5.5.1; refused whatever it embeds),
        // site-local (deprecated, RFC 3879) and multicast (RFC 4291 2.7).
        IPv6Row(IPv6(), 96, "IPv4-compatible (deprecated)", reachable: false, inRegistry: false),
        IPv6Row(IPv6(0xfec0), 10, "site-local (deprecated)", reachable: false, inRegistry: false),
        IPv6Row(IPv6(0xff00), 8, "multicast", reachable: false, inRegistry: false),
    ]

    /// The most specific IPv4 row containing `address`.
    static func row(containing address: UInt32) -> IPv4Row? {
        var best: IPv4Row?
        for row in ipv4 where row.contains(address) && row.length >= (best?.length ?? -1) { best = row }
        return best
    }

    /// The most specific IPv6 row containing `address`.
    static func row(containing address: IPv6) -> IPv6Row? {
        var best: IPv6Row?
        for row in ipv6 where row.contains(address) && row.length >= (best?.length ?? -1) { best = row }
        return best
    }

    /// Why `address` may not be a webhook target, or `nil` when it may.
    static func refusal(ipv4 address: UInt32) -> String? {
        guard let row = row(containing: address), !row.globallyReachable else { return nil }
        return "is in \(row.text), \(row.name)\(row.inRegistry ? ", not globally reachable" : "")"
    }

    /// Why `address` may not be a webhook target, or `nil` when it may; embedded IPv4 addresses are judged too.
    static func refusal(ipv6 address: IPv6) -> String? {
        guard let row = row(containing: address) else { return nil }
        if let embedding = row.embedding {
            for embedded in embeddedIPv4(address, embedding) {
                if let reason = refusal(ipv4: embedded) {
                    return "is in \(row.text), \(row.name), and embeds the IPv4 address \(text(ipv4: embedded)), which \(reason)"
                }
            }
            return nil
        }
        if row.globallyReachable == true { return nil }
        return "is in \(row.text), \(row.name)\(row.inRegistry ? ", not globally reachable" : "")"
    }

    /// The IPv4 addresses `address` carries in the form `embedding`.
    static func embeddedIPv4(_ address: IPv6, _ embedding: Embedding) -> [UInt32] {
        switch embedding {
        case .last32: [UInt32(truncatingIfNeeded: address.low)]
        case .sixToFour: [UInt32(truncatingIfNeeded: address.high >> 16)]
        case .teredo: [UInt32(truncatingIfNeeded: address.high), ~UInt32(truncatingIfNeeded: address.low)]
        }
    }

    /// Dotted-quad text.
    static func text(ipv4 a: UInt32) -> String {
        "\(a >> 24).\(a >> 16 & 0xff).\(a >> 8 & 0xff).\(a & 0xff)"
    }
}
