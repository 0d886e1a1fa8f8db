import Foundation
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterWebhooks

private let secret = "https-test-secret-0123"

/// Fast retries and a short retry window, loopback allowed (the receivers listen on 127.0.0.1).
private func configuration(tls: WebhookTLS, allowPrivate: Bool = true, retention: Double = 120) -> WebhookDispatcher.Configuration {
    WebhookDispatcher.Configuration(
        retryPolicy: WebhookRetryPolicy(initialDelay: 0.01, maximumDelay: 0.04, multiplier: 2, retention: retention),
        allowPrivateTargets: allowPrivate, connectTimeout: 5, responseTimeout: 10, idlePollInterval: 0.05,
        jitterSeed: 99, tls: tls)
}

/// One POST, its outcome kept for the test's task to check (blocking work runs off the pool).
private func post(_ client: WebhookHTTPClient, _ target: WebhookTarget) -> Result<Int, WebhookError> {
    Result { () throws(WebhookError) in try client.post(to: target, headers: [], body: [1]) }
}

extension Result {
    var success: Success? { try? get() }
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// HTTPS delivery against a Python `http.server` wrapped in `ssl`, with a CA made for the test. Child
/// processes and sockets are waited for off Swift's concurrency pool (`offThePool`).
@Suite("Webhooks over HTTPS (libcurl)", .serialized)
struct HTTPSTests {
    @Test("delivered over https when the receiver's CA is trusted; the signature verifies; one kept-alive connection")
    func deliversWithTrustedCA() async throws {
        let (certificates, receiver) = try await offThePool {
            let certificates = try TestCertificates()
            return (certificates, try WebhookReceiverProcess(["--cert", certificates.serverCertificate,
                                                              "--key", certificates.serverKey, "--secret", secret]))
        }
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
        let (certificates, receiver) = try await offThePool {
            let certificates = try TestCertificates()
            return (certificates, try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey]))
        }
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
    func systemStoreAloneRefusesPrivateCA() async throws {
        let (outcome, seen) = try await offThePool {
            let certificates = try TestCertificates()
            let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey])
            defer { receiver.stop() }
            let client = WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true))
            let target = try WebhookTarget(url: receiver.url())
            return (post(client, target), receiver.requests)
        }
        #expect(outcome.failure?.code == .transport && outcome.failure?.message.contains("certificate is not trusted") == true, "\(outcome)")
        #expect(seen.isEmpty)
    }

    @Test("a certificate for 127.0.0.1 does not do for the name localhost")
    func nameMismatch() async throws {
        let (byAddress, byName, seen) = try await offThePool {
            let certificates = try TestCertificates()
            let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey])
            defer { receiver.stop() }
            let client = try WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5,
                                               responseTimeout: 10, tls: WebhookTLS(trustedCAFile: certificates.caCertificate))
            return (post(client, try WebhookTarget(url: receiver.url())),
                    post(client, try WebhookTarget(url: receiver.url(host: "localhost"))), receiver.requests)
        }
        #expect(byAddress.success == 204)
        #expect(byName.failure?.code == .transport && byName.failure?.message.contains("does not match the host name") == true,
                "\(byName)")
        #expect(seen.count == 1)
    }

    @Test("a host name that resolves to loopback is refused unless private targets are allowed")
    func loopbackNameRefused() async throws {
        let (registration, deliveries, seen) = try await offThePool {
            let certificates = try TestCertificates()
            let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey])
            defer { receiver.stop() }
            let tls = WebhookTLS(trustedCAFile: certificates.caCertificate)
            let dispatcher = try WebhookDispatcher(service: try makeService(), store: InMemoryWebhookStore(),
                                                   configuration: configuration(tls: tls, allowPrivate: false))
            let url = receiver.url(host: "localhost")
            let registration = Result { () throws(WebhookError) in try dispatcher.register(url: url, secret: secret).id }
            let client = try WebhookHTTPClient(policy: TargetAddressPolicy(), connectTimeout: 5, responseTimeout: 10, tls: tls)
            let deliveries = try ["localhost", "127.0.0.1"].map { post(client, try WebhookTarget(url: receiver.url(host: $0))) }
            return (registration, deliveries, receiver.requests)
        }
        #expect(registration.failure?.code == .targetRefused && registration.failure?.message.contains("loopback") == true,
                "\(registration)")
        for delivery in deliveries { #expect(delivery.failure?.code == .targetRefused, "\(delivery)") }
        #expect(seen.isEmpty)
    }

    @Test("mutual TLS: a receiver that demands a client certificate refuses us without one and accepts ours")
    func mutualTLS() async throws {
        let (anonymous, identified, seen) = try await offThePool {
            let certificates = try TestCertificates()
            let receiver = try WebhookReceiverProcess(["--cert", certificates.serverCertificate, "--key", certificates.serverKey,
                                                       "--client-ca", certificates.caCertificate])
            defer { receiver.stop() }
            let target = try WebhookTarget(url: receiver.url())
            let anonymous = try WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5,
                                                  responseTimeout: 10, tls: WebhookTLS(trustedCAFile: certificates.caCertificate))
            let identified = try WebhookHTTPClient(
                policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5, responseTimeout: 10,
                tls: WebhookTLS(trustedCAFile: certificates.caCertificate, clientCertificateFile: certificates.clientCertificate,
                                clientKeyFile: certificates.clientKey))
            let results = (post(anonymous, target), post(identified, target))
            // The receiver prints a request after it has answered it: wait for the line.
            _ = eventually(10) { !receiver.requests.isEmpty }
            return (results.0, results.1, receiver.requests)
        }
        let refusal = anonymous.failure?.message ?? "accepted without a client certificate"
        #expect(anonymous.failure?.code == .transport
                && (refusal.contains("TLS handshake failed") || refusal.contains("connection broke")), "\(refusal)")
        #expect(identified.success == 204, "\(identified)")
        #expect(seen.count == 1 && seen.first?.clientCertificate == "perimeter-webhooks")
    }

    @Test("the client reuses its connection between requests to one receiver, http and https")
    func keepAlive() async throws {
        let runs = try await offThePool {
            let certificates = try TestCertificates()
            return try [false, true].map { tls in
                let receiver = try WebhookReceiverProcess(tls ? ["--cert", certificates.serverCertificate, "--key", certificates.serverKey] : [])
                defer { receiver.stop() }
                let client = try WebhookHTTPClient(policy: TargetAddressPolicy(allowPrivateTargets: true), connectTimeout: 5,
                                                   responseTimeout: 10, tls: WebhookTLS(trustedCAFile: certificates.caCertificate))
                let target = try WebhookTarget(url: receiver.url(scheme: tls ? "https" : "http"))
                let responses = try (0..<5).map { _ in try client.exchange(to: target, headers: [], body: [1, 2, 3]) }
                // The receiver prints a request after it has answered it: wait for all five lines.
                _ = eventually(10) { receiver.requests.count >= responses.count }
                return (responses, Set(receiver.requests.map(\.peer)).count)
            }
        }
        for (responses, connections) in runs {
            #expect(responses.map(\.status) == Array(repeating: 204, count: 5))
            #expect(responses.map(\.reusedConnection) == [false, true, true, true, true])
            #expect(connections == 1)
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
