import Foundation
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterServer

private let secret = "https-test-secret-0123"

/// Fast retries and a short retry window, loopback allowed (the receivers listen on 127.0.0.1).
private func configuration(tls: WebhookTLS, allowPrivate: Bool = true, retention: Double = 120) -> WebhookDispatcher.Configuration {
    WebhookDispatcher.Configuration(
        retryPolicy: WebhookRetryPolicy(initialDelay: 0.01, maximumDelay: 0.04, multiplier: 2, retention: retention),
        allowPrivateTargets: allowPrivate, connectTimeout: 5, responseTimeout: 10, idlePollInterval: 0.05,
        jitterSeed: 99, tls: tls)
}

/// HTTPS delivery against a Python `http.server` wrapped in `ssl`, with a CA made for the test.
@Suite("Webhooks over HTTPS (libcurl)", .serialized)
struct HTTPSTests {
    @Test("delivered over https when the receiver's CA is trusted; the signature verifies; one kept-alive connection")
    func deliversWithTrustedCA() async throws {
        let certificates = try TestCertificates()
        let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey,
                                                   "--secret", secret])
        defer { receiver.stop() }
        let service = try makeService()
        let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(),
                                               configuration: configuration(tls: WebhookTLS(trustedCAFile: certificates.caCertificate)))
        try dispatcher.start()
        defer { dispatcher.stop() }
        let created = try dispatcher.register(url: receiver.url(), secret: secret)
        let events = try drive(service, device: "d1", visits: 3, start: 0)
        #expect(events.count == 6)
        let requests = try await offThePool { eventually(20) { receiver.requests.count >= 6 } ? receiver.requests : [] }
        try #require(requests.count == 6, "the receiver got \(receiver.requests.count) of 6 requests")
        #expect(requests.map { $0.headers["idempotency-key"] } == events.map { $0.event.id })
        for request in requests {
            #expect(request.signatureValid == true, "Python's HMAC check failed")
            let header = try #require(request.headers["perimeter-signature"])
            #expect(WebhookSignature.verify(headerValue: header, body: request.body, secret: secret))
            #expect(request.path == "/hook")
        }
        #expect(Set(requests.map(\.peer)).count == 1, "keep-alive: every event on one connection, got \(Set(requests.map(\.peer)))")
        #expect(eventually(5) { (try? dispatcher.webhook(id: created.id).counters.delivered) == 6 })
        #expect(try dispatcher.webhook(id: created.id).counters.lastError == nil)
    }

    @Test("refused without the CA: nothing is sent and the status and dead letter name the certificate problem")
    func refusedWithoutTrustedCA() async throws {
        let certificates = try TestCertificates()
        let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey])
        defer { receiver.stop() }
        let service = try makeService()
        // Another CA is trusted (so the system store plus a file is in use), just not the receiver's.
        let dispatcher = try WebhookDispatcher(service: service, store: InMemoryWebhookStore(),
                                               configuration: configuration(tls: WebhookTLS(trustedCAFile: certificates.otherCA),
                                                                            retention: 0.3))
        try dispatcher.start()
        defer { dispatcher.stop() }
        let created = try dispatcher.register(url: receiver.url(), secret: secret)
        try drive(service, device: "d1", visits: 1, start: 0)
        let letters = try await offThePool {
            eventually(20) { ((try? dispatcher.deadLetters(id: created.id, after: 0, limit: 10)) ?? []).count >= 2 }
                ? try dispatcher.deadLetters(id: created.id, after: 0, limit: 10) : []
        }
        try #require(letters.count == 2, "expected both events dead-lettered")
        for letter in letters {
            #expect(letter.lastError.contains("certificate is not trusted"), "\(letter.lastError)")
            #expect(letter.lastError.contains("--webhook-ca"))
        }
        let status = try dispatcher.webhook(id: created.id)
        #expect(status.counters.lastError?.contains("certificate is not trusted") == true, "\(String(describing: status.counters.lastError))")
        #expect(status.counters.delivered == 0)
        #expect(receiver.requests.isEmpty, "a request reached a receiver whose certificate is not trusted")
    }

    @Test("the system store alone does not trust a private CA")
    func systemStoreAloneRefusesPrivateCA() throws {
        let certificates = try TestCertificates()
        let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey])
        defer { receiver.stop() }
        let client = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true))
        do {
            _ = try client.post(to: try WebhookTarget(url: receiver.url()), headers: [], body: [1])
            Issue.record("an untrusted certificate was accepted")
        } catch {
            #expect(error.code == .transport && error.message.contains("certificate is not trusted"), "\(error)")
        }
        #expect(receiver.requests.isEmpty)
    }

    @Test("a certificate for 127.0.0.1 does not do for the name localhost")
    func nameMismatch() throws {
        let certificates = try TestCertificates()
        let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey])
        defer { receiver.stop() }
        let client = try WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5,
                                           responseTimeout: 10, tls: WebhookTLS(trustedCAFile: certificates.caCertificate))
        #expect(try client.post(to: try WebhookTarget(url: receiver.url()), headers: [], body: [1]) == 204)
        do {
            _ = try client.post(to: try WebhookTarget(url: receiver.url(host: "localhost")), headers: [], body: [1])
            Issue.record("a certificate without the name localhost was accepted for it")
        } catch {
            #expect(error.code == .transport && error.message.contains("does not match the host name"), "\(error)")
        }
        #expect(receiver.requests.count == 1)
    }

    @Test("a host name that resolves to loopback is refused unless private targets are allowed")
    func loopbackNameRefused() throws {
        let certificates = try TestCertificates()
        let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey])
        defer { receiver.stop() }
        let tls = WebhookTLS(trustedCAFile: certificates.caCertificate)
        let dispatcher = try WebhookDispatcher(service: try makeService(), store: InMemoryWebhookStore(),
                                               configuration: configuration(tls: tls, allowPrivate: false))
        do {
            try dispatcher.register(url: receiver.url(host: "localhost"), secret: secret)
            Issue.record("a webhook to localhost was registered")
        } catch {
            #expect(error.code == .targetRefused && error.message.contains("loopback"), "\(error)")
        }
        let client = try WebhookHTTPClient(policy: TargetAddressPolicy(), connectTimeout: 5, responseTimeout: 10, tls: tls)
        for host in ["localhost", "127.0.0.1"] {
            do {
                _ = try client.post(to: try WebhookTarget(url: receiver.url(host: host)), headers: [], body: [1])
                Issue.record("a delivery to \(host) was attempted")
            } catch {
                #expect(error.code == .targetRefused, "\(error)")
            }
        }
        #expect(receiver.requests.isEmpty)
    }

    @Test("mutual TLS: a receiver that demands a client certificate refuses us without one and accepts ours")
    func mutualTLS() throws {
        let certificates = try TestCertificates()
        let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey,
                                                   "--client-ca", certificates.caCertificate])
        defer { receiver.stop() }
        let target = try WebhookTarget(url: receiver.url())
        let anonymous = try WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5,
                                              responseTimeout: 10, tls: WebhookTLS(trustedCAFile: certificates.caCertificate))
        do {
            _ = try anonymous.post(to: target, headers: [], body: [1])
            Issue.record("the receiver accepted a client without a certificate")
        } catch {
            #expect(error.code == .transport && (error.message.contains("TLS handshake failed")
                                                 || error.message.contains("connection broke")), "\(error)")
        }
        let identified = try WebhookHTTPClient(
            policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5, responseTimeout: 10,
            tls: WebhookTLS(trustedCAFile: certificates.caCertificate, clientCertificateFile: certificates.clientCertificate,
                            clientKeyFile: certificates.clientKey))
        #expect(try identified.post(to: target, headers: [("X-Test", "mtls")], body: [1]) == 204)
        let seen = receiver.requests
        #expect(seen.count == 1 && seen.first?.clientCertificate == "perimeter-webhooks")
    }

    @Test("the client reuses its connection between requests to one receiver, http and https")
    func keepAlive() throws {
        let certificates = try TestCertificates()
        for tls in [false, true] {
            let receiver = try WebhookReceiverProcess(tls ? ["--cert", certificates.serverCertificate, "--key", certificates.serverKey] : [])
            defer { receiver.stop() }
            let client = try WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5,
                                               responseTimeout: 10, tls: WebhookTLS(trustedCAFile: certificates.caCertificate))
            let target = try WebhookTarget(url: receiver.url(scheme: tls ? "https" : "http"))
            let responses = try (0..<5).map { _ in try client.exchange(to: target, headers: [], body: [1, 2, 3]) }
            #expect(responses.map(\.status) == Array(repeating: 204, count: 5))
            #expect(responses.map(\.reusedConnection) == [false, true, true, true, true])
            #expect(Set(receiver.requests.map(\.peer)).count == 1)
        }
    }

    @Test("bad TLS files are reported at start-up, naming the file")
    func badFiles() throws {
        let folder = TemporaryFolder()
        let notPEM = folder.path("not.pem")
        try "hello".write(toFile: notPEM, atomically: true, encoding: .utf8)
        let cases: [(WebhookTLS, String)] = [
            (WebhookTLS(trustedCAFile: folder.path("missing.pem")), "does not exist"),
            (WebhookTLS(trustedCAFile: notPEM), "no PEM certificate"),
            (WebhookTLS(clientCertificateFile: notPEM), "no PEM certificate"),
            (WebhookTLS(clientKeyFile: notPEM), "without a client certificate"),
        ]
        for (tls, expected) in cases {
            do {
                _ = try WebhookHTTPClient(tls: tls)
                Issue.record("\(tls) was accepted")
            } catch {
                #expect(error.code == .invalidArgument && error.message.contains(expected), "\(error)")
            }
        }
        #expect(throws: WebhookError.self) {
            try WebhookDispatcher(service: try makeService(), store: InMemoryWebhookStore(),
                                  configuration: configuration(tls: WebhookTLS(trustedCAFile: folder.path("missing.pem"))))
        }
    }
}
