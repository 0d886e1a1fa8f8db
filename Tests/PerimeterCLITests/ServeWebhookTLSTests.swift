import Foundation
import Testing

/// `perimeter serve`'s webhook TLS flags: files are checked before the server serves.
@Suite("perimeter serve --webhook-ca / --webhook-client-cert / --webhook-client-key")
struct ServeWebhookTLSTests {
    @Test func missingOrInvalidFilesStopTheServerNamingTheFile() throws {
        let folder = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let notPEM = try write("not a certificate\n", to: "ca.txt", in: folder)
        let database = folder.appendingPathComponent("state.sqlite").path
        let cases: [([String], String)] = [
            (["--webhook-ca", folder.appendingPathComponent("missing.pem").path], "missing.pem does not exist"),
            (["--webhook-ca", notPEM], "holds no PEM certificate"),
            (["--webhook-client-key", notPEM], "without a client certificate"),
        ]
        for (flags, expected) in cases {
            let run = perimeter(["serve", "--db", database, "--port", "0"] + flags)
            #expect(run.status != 0, "serve \(flags) started")
            #expect(run.error.contains(expected), "serve \(flags): \(run.error)")
        }
    }

    @Test func helpListsTheFlags() {
        let help = perimeter("serve", "--help").output
        for flag in ["--webhook-ca", "--webhook-client-cert", "--webhook-client-key"] {
            #expect(help.contains(flag), "\(flag) missing from serve --help")
        }
    }
}
