#if canImport(Glibc)
import Glibc
#endif

/// The SSRF guard: which resolved addresses a webhook may be sent to.
///
/// Unless ``allowPrivateTargets``, an address is refused when the most specific row of the IANA
/// special-purpose address registries that contains it is not globally reachable (loopback, private,
/// shared, link-local, documentation, benchmarking, IETF protocol assignments, reserved, …; see
/// ``SpecialPurposeAddresses``), and when it is multicast, limited broadcast or deprecated site-local.
/// IPv6 forms that embed an IPv4 address — IPv4-mapped, IPv4-compatible, NAT64 and 6to4, and both
/// addresses of a Teredo address — are refused when the embedded address is (`[::ffff:127.0.0.1]`,
/// `[64:ff9b::a9fe:a9fe]` and `[2002:7f00:1::]` all reach a refused IPv4 address); the deprecated
/// IPv4-compatible form and the local-use NAT64 prefix are refused outright. A host is refused when
/// *any* address it resolves to is refused, and the client connects only to the addresses it checked
/// (no second resolution: DNS rebinding-safe).
public struct TargetAddressPolicy: Hashable, Sendable {
    /// Whether every address is allowed — loopback, private, link-local and the other special-purpose
    /// ranges included (tests, private deployments).
    public var allowPrivateTargets: Bool

    /// Creates a policy; special-purpose targets are refused by default.
    public init(allowPrivateTargets: Bool = false) {
        self.allowPrivateTargets = allowPrivateTargets
    }

    /// Why the IPv4 address (4 bytes, network order) is refused, or `nil` when it is public.
    public static func refusalReason(ipv4 b: [UInt8]) -> String? {
        guard b.count == 4 else { return "is not an IPv4 address" }
        return SpecialPurposeAddresses.refusal(ipv4: UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3]))
    }

    /// Why the IPv6 address (16 bytes) is refused, or `nil` when it is public. An IPv4 address embedded
    /// in it is judged too.
    public static func refusalReason(ipv6 b: [UInt8]) -> String? {
        guard b.count == 16 else { return "is not an IPv6 address" }
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<8 {
            high = high << 8 | UInt64(b[i])
            low = low << 8 | UInt64(b[8 + i])
        }
        return SpecialPurposeAddresses.refusal(ipv6: SpecialPurposeAddresses.IPv6(high: high, low: low))
    }

    /// Why `address` is refused under this policy, or `nil` when it may be used.
    public func refusalReason(_ address: ResolvedAddress) -> String? {
        guard !allowPrivateTargets else { return nil }
        return address.isIPv6 ? Self.refusalReason(ipv6: address.bytes) : Self.refusalReason(ipv4: address.bytes)
    }

    /// Resolves `target` and checks every address.
    /// - Throws: ``WebhookError/Code/targetRefused`` when the host does not resolve or any address is refused.
    public func resolve(_ target: WebhookTarget) throws(WebhookError) -> [ResolvedAddress] {
        let addresses = try ResolvedAddress.resolve(host: target.host, port: target.port)
        for address in addresses {
            if let reason = refusalReason(address) {
                throw WebhookError(.targetRefused,
                                   "webhook target \(target.host) resolves to \(address.text), which \(reason); such targets are refused unless private targets are allowed (allowPrivateTargets)",
                                   field: "url")
            }
        }
        return addresses
    }
}

/// One address a host name resolved to, with the port to connect to.
public struct ResolvedAddress: Hashable, Sendable {
    /// Whether it is IPv6 (else IPv4).
    public var isIPv6: Bool
    /// The address bytes in network order (4 or 16).
    public var bytes: [UInt8]
    /// The port.
    public var port: UInt16

    /// Creates an address.
    public init(isIPv6: Bool, bytes: [UInt8], port: UInt16) {
        self.isIPv6 = isIPv6
        self.bytes = bytes
        self.port = port
    }

    /// Dotted or colon text of the address.
    public var text: String {
        if !isIPv6 { return bytes.map(String.init).joined(separator: ".") }
        return stride(from: 0, to: 16, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }

    /// Resolves `host` (a name or an address literal) with `getaddrinfo`.
    /// - Throws: ``WebhookError/Code/targetRefused`` when it does not resolve.
    public static func resolve(host: String, port: UInt16) throws(WebhookError) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, nil, &hints, &list)
        guard code == 0, let first = list else {
            let reason = String(cString: gai_strerror(code))
            throw WebhookError(.targetRefused, "webhook target host \(host) cannot be resolved (\(reason))", field: "url")
        }
        defer { freeaddrinfo(list) }
        var result: [ResolvedAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let node = cursor {
            if let raw = node.pointee.ai_addr {
                if node.pointee.ai_family == AF_INET {
                    let address = UnsafeRawPointer(raw).loadUnaligned(as: sockaddr_in.self)
                    let bytes = withUnsafeBytes(of: address.sin_addr.s_addr) { Array($0) }
                    result.append(ResolvedAddress(isIPv6: false, bytes: bytes, port: port))
                } else if node.pointee.ai_family == AF_INET6 {
                    let address = UnsafeRawPointer(raw).loadUnaligned(as: sockaddr_in6.self)
                    let bytes = withUnsafeBytes(of: address.sin6_addr) { Array($0) }
                    result.append(ResolvedAddress(isIPv6: true, bytes: bytes, port: port))
                }
            }
            cursor = node.pointee.ai_next
        }
        var seen = Set<ResolvedAddress>()
        result = result.filter { seen.insert($0).inserted }
        guard !result.isEmpty else {
            throw WebhookError(.targetRefused, "webhook target host \(host) has no IPv4 or IPv6 address", field: "url")
        }
        return result
    }
}
