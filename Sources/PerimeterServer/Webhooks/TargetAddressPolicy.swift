#if canImport(Glibc)
import Glibc
#endif

/// The SSRF guard: which resolved addresses a webhook may be sent to.
///
/// Refused unless ``allowPrivateTargets``: loopback (127/8, ::1), unspecified (0/8, ::), private
/// (10/8, 172.16/12, 192.168/16, fc00::/7), carrier-grade NAT (100.64/10), link-local (169.254/16,
/// fe80::/10, cloud metadata endpoints live there), multicast and reserved (224/4, 240/4, ff00::/8), and
/// IPv4-mapped IPv6 forms of those. A host is refused when *any* address it resolves to is refused, and
/// the client connects only to the addresses it checked (no second resolution: DNS rebinding-safe).
public struct TargetAddressPolicy: Hashable, Sendable {
    /// Whether loopback, private and link-local targets are allowed (tests, private deployments).
    public var allowPrivateTargets: Bool

    /// Creates a policy; private targets are refused by default.
    public init(allowPrivateTargets: Bool = false) {
        self.allowPrivateTargets = allowPrivateTargets
    }

    /// Why the IPv4 address (4 bytes, network order) is refused, or `nil` when it is public.
    public static func refusalReason(ipv4 b: [UInt8]) -> String? {
        guard b.count == 4 else { return "is not an IPv4 address" }
        switch (b[0], b[1]) {
        case (127, _): return "is a loopback address"
        case (0, _): return "is an unspecified address"
        case (10, _): return "is a private address"
        case (172, 16...31): return "is a private address"
        case (192, 168): return "is a private address"
        case (100, 64...127): return "is a carrier-grade NAT address"
        case (169, 254): return "is a link-local address"
        case (224...255, _): return "is a multicast or reserved address"
        default: return nil
        }
    }

    /// Why the IPv6 address (16 bytes) is refused, or `nil` when it is public.
    public static func refusalReason(ipv6 b: [UInt8]) -> String? {
        guard b.count == 16 else { return "is not an IPv6 address" }
        if b[0..<15].allSatisfy({ $0 == 0 }) {
            return b[15] == 1 ? "is a loopback address" : (b[15] == 0 ? "is an unspecified address" : "is a reserved address")
        }
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff {
            return refusalReason(ipv4: Array(b[12..<16]))
        }
        if b[0] & 0xfe == 0xfc { return "is a private (unique local) address" }
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return "is a link-local address" }
        if b[0] == 0xff { return "is a multicast address" }
        return nil
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
