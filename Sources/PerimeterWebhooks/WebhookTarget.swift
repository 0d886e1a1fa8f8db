/// A parsed `http://host[:port]/path[?query]` or `https://…` webhook URL.
public struct WebhookTarget: Hashable, Sendable {
    /// Whether the URL is `https` (TLS, verified against the trusted CAs).
    public var isHTTPS: Bool
    /// The host name or address literal (IPv6 without brackets).
    public var host: String
    /// The port (default 80 for http, 443 for https).
    public var port: UInt16
    /// The request target: path plus query, at least `/`.
    public var pathAndQuery: String

    /// Parses `url`. - Throws: ``WebhookError/Code/invalidArgument`` (field `url`) saying what is wrong.
    public init(url: String) throws(WebhookError) {
        func bad(_ why: String) -> WebhookError {
            WebhookError(.invalidArgument, "url \"\(url)\" \(why)", field: "url")
        }
        guard url.utf8.count <= 2048 else { throw bad("is longer than 2048 bytes") }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
            throw bad("contains spaces, control or non-ASCII characters (percent-encode them)")
        }
        let lower = url.lowercased()
        if lower.hasPrefix("https://") {
            isHTTPS = true
        } else if lower.hasPrefix("http://") {
            isHTTPS = false
        } else {
            throw bad("must start with http:// or https://")
        }
        var rest = Substring(url.dropFirst(isHTTPS ? "https://".count : "http://".count))
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var path = String(rest[authorityEnd...])
        if path.isEmpty || path.hasPrefix("?") { path = "/" + path }
        guard !authority.contains("@") else { throw bad("must not contain credentials (user@host)") }
        var hostPart = Substring(authority)
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw bad("has an unterminated IPv6 literal") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw bad("has garbage after the IPv6 literal") }
                portPart = after.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        guard !hostPart.isEmpty else { throw bad("has no host") }
        let allowed = hostPart.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d || c == 0x2e || c == 0x3a || c == 0x5f
        }
        guard allowed else { throw bad("has an invalid host \"\(hostPart)\"") }
        host = String(hostPart)
        if let portPart {
            guard let value = UInt16(portPart), value > 0 else { throw bad("has an invalid port \"\(portPart)\" (1–65535)") }
            port = value
        } else {
            port = isHTTPS ? 443 : 80
        }
        pathAndQuery = path
    }

    /// `http` or `https`.
    public var scheme: String { isHTTPS ? "https" : "http" }

    /// The `Host` header value: the host, and the port unless it is the scheme's default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (isHTTPS ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// The normalised URL a client requests: scheme, host, explicit port, path and query (no fragment).
    public var requestURL: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(name):\(port)\(pathAndQuery)"
    }
}
