import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
import PerimeterTestSupport
@testable import PerimeterWebhooks
@testable import PerimeterHTTPClient

@Suite("Webhook targets and the SSRF guard")
struct TargetTests {
    @Test func parsesURLs() throws {
        let a = try WebhookTarget(url: "http://example.com")
        #expect(a.host == "example.com" && a.port == 80 && a.pathAndQuery == "/" && a.hostHeader == "example.com")
        let b = try WebhookTarget(url: "http://hooks.example.com:8080/geo/in?x=1#frag")
        #expect(b.host == "hooks.example.com" && b.port == 8080 && b.pathAndQuery == "/geo/in?x=1" && b.hostHeader == "hooks.example.com:8080")
        let c = try WebhookTarget(url: "http://[::1]:9000/h")
        #expect(c.host == "::1" && c.port == 9000 && c.hostHeader == "[::1]:9000")
        let d = try WebhookTarget(url: "HTTP://Example.com?q")
        #expect(d.pathAndQuery == "/?q")
        #expect(!d.isHTTPS && d.requestURL == "http://Example.com:80/?q")
        let e = try WebhookTarget(url: "https://hooks.example.com/geo")
        #expect(e.isHTTPS && e.port == 443 && e.hostHeader == "hooks.example.com" && e.requestURL == "https://hooks.example.com:443/geo")
        let f = try WebhookTarget(url: "HTTPS://[2001:db8::1]:8443")
        #expect(f.isHTTPS && f.host == "2001:db8::1" && f.hostHeader == "[2001:db8::1]:8443"
                && f.requestURL == "https://[2001:db8::1]:8443/")
        let g = try WebhookTarget(url: "https://h:80/")
        #expect(g.hostHeader == "h:80")
    }

    @Test(arguments: ["ws://example.com/", "ftp://x/", "https://", "https://user:pw@host/", "example.com", "http://", "http://user@host/",
                      "http://host:0/", "http://host:70000/", "http://ho st/", "http://[::1/", "http://h\u{e9}/"])
    func rejectsBadURLs(url: String) {
        #expect(throws: WebhookError.self) { try WebhookTarget(url: url) }
        do {
            _ = try WebhookTarget(url: url)
        } catch {
            #expect(error.code == .invalidArgument && error.field == "url")
        }
    }

    @Test(arguments: [
        ([127, 0, 0, 1], true), ([127, 9, 9, 9], true), ([10, 1, 2, 3], true), ([172, 16, 0, 1], true),
        ([172, 31, 255, 255], true), ([172, 32, 0, 1], false), ([192, 168, 1, 1], true), ([169, 254, 169, 254], true),
        ([0, 0, 0, 0], true), ([100, 64, 0, 1], true), ([100, 128, 0, 1], false), ([224, 0, 0, 1], true),
        ([255, 255, 255, 255], true), ([8, 8, 8, 8], false), ([93, 184, 216, 34], false), ([11, 0, 0, 1], false),
    ] as [([UInt8], Bool)])
    func ipv4Ranges(bytes: [UInt8], refused: Bool) {
        #expect((TargetAddressPolicy.refusalReason(ipv4: bytes) != nil) == refused)
    }

    @Test func ipv6Ranges() {
        func v6(_ prefix: [UInt8], last: UInt8 = 1) -> [UInt8] { prefix + [UInt8](repeating: 0, count: 15 - prefix.count) + [last] }
        #expect(TargetAddressPolicy.refusalReason(ipv6: v6([])) != nil)  // ::1
        #expect(TargetAddressPolicy.refusalReason(ipv6: v6([], last: 0)) != nil)  // ::
        #expect(TargetAddressPolicy.refusalReason(ipv6: v6([0xfe, 0x80])) != nil)
        #expect(TargetAddressPolicy.refusalReason(ipv6: v6([0xfd, 0x12])) != nil)
        #expect(TargetAddressPolicy.refusalReason(ipv6: v6([0xff, 0x02])) != nil)
        #expect(TargetAddressPolicy.refusalReason(ipv6: v6([0x20, 0x01, 0x0d, 0xb8])) != nil)  // documentation
        #expect(TargetAddressPolicy.refusalReason(ipv6: v6([0x2a, 0x00, 0x14, 0x50])) == nil)
        let mapped: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]
        #expect(TargetAddressPolicy.refusalReason(ipv6: mapped + [127, 0, 0, 1]) != nil)
        #expect(TargetAddressPolicy.refusalReason(ipv6: mapped + [8, 8, 8, 8]) == nil)
    }

    @Test(arguments: ["http://127.0.0.1:9/x", "http://localhost:9/x", "http://10.0.0.1/", "http://169.254.169.254/latest",
                      "http://[::1]:9/", "http://0.0.0.0/"])
    func refusesPrivateTargets(url: String) throws {
        let policy = TargetAddressPolicy()
        do {
            _ = try policy.resolve(try WebhookTarget(url: url))
            Issue.record("\(url) was not refused")
        } catch {
            #expect(error.code == .targetRefused && error.field == "url")
        }
        #expect(throws: Never.self) { try TargetAddressPolicy(allowPrivateTargets: true).resolve(try WebhookTarget(url: "http://127.0.0.1:9/")) }
    }

    @Test func clientRefusesBeforeConnecting() throws {
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let client = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: false))
        #expect(throws: WebhookError.self) { try client.post(to: try WebhookTarget(url: receiver.url), headers: [], body: []) }
        #expect(receiver.requests.isEmpty)
        let allowed = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true))
        let status = try allowed.post(to: try WebhookTarget(url: receiver.url), headers: [("X-Test", "1")], body: Array("hello".utf8))
        #expect(status == 200)
        #expect(receiver.requests.first?.body == Array("hello".utf8))
        #expect(receiver.requests.first?.headers["x-test"] == "1")
        #expect(receiver.requests.first?.path == "/hook")
    }

    @Test func clientReportsStatusTimeoutAndClose() throws {
        let receiver = try LoopbackReceiver(script: [.status(503), .hang(0.6), .close])
        defer { receiver.stop() }
        let client = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 1, responseTimeout: 0.2)
        let target = try WebhookTarget(url: receiver.url)
        #expect(try client.post(to: target, headers: [], body: []) == 503)
        do {
            _ = try client.post(to: target, headers: [], body: [])
            Issue.record("no timeout")
        } catch {
            #expect(error.code == .transport && error.message.contains("timeout"))
        }
        Thread.sleep(forTimeInterval: 0.5)  // let the receiver finish hanging (not an assertion on time)
        do {
            _ = try client.post(to: target, headers: [], body: [])
            Issue.record("no error on a closed connection")
        } catch {
            #expect(error.code == .transport)
        }
    }

    @Test func connectionRefused() throws {
        // A port with no listener: bind one, learn its port, close it.
        let receiver = try LoopbackReceiver()
        let url = receiver.url
        receiver.stop()
        let client = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 1, responseTimeout: 1)
        #expect(throws: WebhookError.self) { try client.post(to: try WebhookTarget(url: url), headers: [], body: []) }
    }

    @Test func nonHTTPRepliesAreMalformed() async throws {
        let outcome = try await offThePool {
            let receiver = try WebhookReceiverProcess(["--raw-reply", "SMTP 220 mail.example.com ready\r\n"])
            defer { receiver.stop() }
            let client = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 2, responseTimeout: 5)
            let target = try WebhookTarget(url: receiver.url(scheme: "http"))
            return Result { () throws(WebhookError) in try client.post(to: target, headers: [], body: []) }
        }
        #expect(outcome.failure?.code == .transport && outcome.failure?.message.contains("malformed response") == true, "\(outcome)")
    }

    @Test func headersWithLineBreaksAreRefused() throws {
        let client = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true))
        let target = try WebhookTarget(url: "http://127.0.0.1:9/")
        for header in [("X-A", "1\r\nX-B: 2"), ("X-A\n", "1"), ("X:A", "1")] {
            #expect(throws: WebhookError.self) { try client.post(to: target, headers: [header], body: []) }
        }
    }

    // MARK: - The IANA special-purpose registries

    /// The bytes of an address literal (IPv4 or IPv6), as the resolver would return them.
    static func address(_ text: String) throws -> ResolvedAddress {
        var v4 = in_addr(), v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return ResolvedAddress(isIPv6: false, bytes: withUnsafeBytes(of: v4) { Array($0) }, port: 80)
        }
        try #require(inet_pton(AF_INET6, text, &v6) == 1, "\(text) is not an address literal")
        return ResolvedAddress(isIPv6: true, bytes: withUnsafeBytes(of: v6) { Array($0) }, port: 80)
    }

    static func refusal(_ text: String) throws -> String? {
        TargetAddressPolicy().refusalReason(try address(text))
    }

    @Test("special-purpose and IPv4-embedding addresses are refused, also as URLs", arguments: [
        "::127.0.0.1", "::8.8.8.8", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b::a00:1", "64:ff9b:1::808:808",
        "2002:7f00:1::", "2002:a9fe:a9fe::1", "2002:c0a8:101::", "::ffff:169.254.169.254", "::ffff:10.0.0.1",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:7f00:1:0:0:f7f7:f7f7", "2001:0:808:808::f5ff:fffe",
        "198.18.0.1", "198.19.255.255", "192.0.0.1", "192.0.0.170", "192.0.2.1", "198.51.100.7", "203.0.113.9",
        "192.88.99.1", "240.0.0.1", "255.255.255.255", "0.1.2.3", "100.127.255.254", "224.0.0.251", "239.255.255.250",
        "100::1", "100:0:0:1::1", "2001:2::1", "2001:10::1", "2001:db8::1", "3fff::1", "5f00::1", "fc00::1", "fdff::1",
        "fe80::1", "febf::1", "fec0::1", "ff02::1", "::", "::1",
    ])
    func refusesSpecialPurpose(text: String) throws {
        let reason = try Self.refusal(text)
        #expect(reason != nil, "\(text) was accepted")
        let host = text.contains(":") ? "[\(text)]" : text
        do {
            _ = try TargetAddressPolicy().resolve(try WebhookTarget(url: "http://\(host)/"))
            Issue.record("http://\(host)/ was not refused")
        } catch {
            #expect(error.code == .targetRefused && error.field == "url" && error.message.contains("resolves to"))
        }
        #expect(TargetAddressPolicy(allowPrivateTargets: true).refusalReason(try Self.address(text)) == nil,
                "allowing private targets allows every address")
    }

    @Test("the reason names the range and the embedded address")
    func reasons() throws {
        #expect(try Self.refusal("198.18.0.1") == "is in 198.18.0.0/15, benchmarking, not globally reachable")
        #expect(try Self.refusal("64:ff9b::a9fe:a9fe") ==
                "is in 64:ff9b::/96, IPv4-IPv6 translation (NAT64), and embeds the IPv4 address 169.254.169.254, which is in 169.254.0.0/16, link-local (cloud metadata endpoints live here), not globally reachable")
        #expect(try Self.refusal("224.0.0.1") == "is in 224.0.0.0/4, multicast")
    }

    @Test("public addresses are accepted, also in the forms that embed them", arguments: [
        "8.8.8.8", "1.1.1.1", "93.184.216.34", "11.0.0.1", "100.128.0.1", "172.32.0.1", "192.0.1.1", "192.0.3.1",
        "198.17.255.255", "198.20.0.1", "223.255.255.254", "192.0.0.9", "192.0.0.10", "192.31.196.1", "192.52.193.1",
        "192.175.48.1", "2a00:1450:4001:81c::200e", "2606:4700:4700::1111", "2001:4860:4860::8888",
        "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
        "2001:1::1", "2001:1::2", "2001:1::3", "2001:3::1", "2001:4:112::1", "2001:20::1", "2001:30::1",
        "2620:4f:8000::1",
    ])
    func acceptsPublic(text: String) throws {
        #expect(try Self.refusal(text) == nil)
    }

    @Test("every registry row: its first and last address are judged by the row (or a more specific one)")
    func registryRows() throws {
        #expect(SpecialPurposeAddresses.ipv4.filter(\.inRegistry).count == 25)
        #expect(SpecialPurposeAddresses.ipv6.filter(\.inRegistry).count == 25)
        for row in SpecialPurposeAddresses.ipv4 {
            #expect(row.address & ~row.mask == 0, "\(row.text) is not a network address")
            for address in [row.address, row.address | ~row.mask] {
                // The most specific row decides; the registry nests only a few rows in 192.0.0.0/24.
                let decisive = try #require(SpecialPurposeAddresses.row(containing: address))
                #expect(decisive.length >= row.length)
                #expect((SpecialPurposeAddresses.refusal(ipv4: address) == nil) == decisive.globallyReachable,
                        "\(SpecialPurposeAddresses.text(ipv4: address)) in \(row.text)")
            }
        }
        for row in SpecialPurposeAddresses.ipv6 {
            #expect(row.address.masked(row.length) == row.address, "\(row.text) is not a network address")
            let network = SpecialPurposeAddresses.IPv6(high: ~0, low: ~0).masked(row.length)
            let last = SpecialPurposeAddresses.IPv6(high: row.address.high | ~network.high, low: row.address.low | ~network.low)
            #expect(SpecialPurposeAddresses.row(containing: last)?.length ?? -1 >= row.length, "\(last.text) in \(row.text)")
            for address in [row.address, last] {
                let decisive = try #require(SpecialPurposeAddresses.row(containing: address))
                let refused = SpecialPurposeAddresses.refusal(ipv6: address) != nil
                if decisive.embedding == nil {
                    #expect(refused == (decisive.globallyReachable != true), "\(address.text) in \(row.text)")
                } else {  // the first and last addresses of an embedding range embed 0.0.0.0 or 255.255.255.255
                    #expect(refused, "\(address.text) in \(row.text)")
                }
            }
        }
    }
}

@Suite("HTTPClientSession (libcurl)")
struct HTTPClientSessionTests {
    @Test("connects only to the addresses it is given: a name that resolves nowhere reaches the pinned loopback address")
    func connectsOnlyToPinnedAddresses() async throws {
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let port = receiver.port
        let outcome = try await offThePool { () throws -> HTTPClientResponse in
            let session = try HTTPClientSession(configuration: HTTPClientConfiguration(connectTimeout: 5, timeout: 10))
            // .invalid never resolves (RFC 6761): a lookup of libcurl's own would fail the request.
            return try session.post(url: "http://pinned.invalid:\(port)/hook", host: "pinned.invalid", port: port,
                                    addresses: ["127.0.0.1"], headers: [("X-Pinned", "yes")], body: [1])
        }
        #expect(outcome.status == 200)
        let request = try #require(receiver.requests.first)
        #expect(request.headers["host"] == "pinned.invalid:\(port)" && request.headers["x-pinned"] == "yes")
        #expect(request.headers["expect"] == nil, "no 100-continue round trip")
    }

    @Test func certificateFailuresAreClassified() {
        #expect(HTTPClientSession.certificateKind(verifyResult: 20, detail: "SSL certificate problem: unable to get local issuer certificate") == .certificateNotTrusted)
        #expect(HTTPClientSession.certificateKind(verifyResult: 18, detail: "self-signed certificate") == .certificateNotTrusted)
        #expect(HTTPClientSession.certificateKind(verifyResult: 10, detail: "certificate has expired") == .certificateExpired)
        #expect(HTTPClientSession.certificateKind(verifyResult: 9, detail: "certificate is not yet valid") == .certificateNotYetValid)
        #expect(HTTPClientSession.certificateKind(verifyResult: 0, detail: "SSL: no alternative certificate subject name matches target host name 'x'") == .certificateNameMismatch)
        #expect(HTTPClientSession.certificateKind(verifyResult: 23, detail: "certificate revoked") == .certificateInvalid)
    }
}
