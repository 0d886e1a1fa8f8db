import Foundation
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing

/// schemathesis (PyPI) against /openapi.json: no 5xx, every response conforms to the document (status,
/// content type, headers, body schema), authentication enforced. `make deps` (which `make test` runs
/// first) installs schemathesis into the project's `.venv`; the test is skipped only when neither that
/// nor `PATH` has it.
@Suite("schemathesis against /openapi.json")
struct SchemathesisTests {
    static let executable: String? = {
        let venv = Fixtures.repositoryRoot.appendingPathComponent(".venv/bin").path
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return ([venv] + path.split(separator: ":").map(String.init)).map { "\($0)/schemathesis" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    @Test(.enabled(if: executable != nil, "schemathesis is not installed: run `make deps` (it makes .venv with it)"))
    func conformsToItsOpenAPIDocument() async throws {
        let secret = "schemathesis-secret"
        let server = try PerimeterServer(configuration: ServerConfiguration(
            address: "127.0.0.1", port: 0, threads: 2,
            api: APIConfiguration(tokens: [AccessToken(name: "st", scopes: [.admin], secret: secret)])))
        defer { server.stop() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.executable))
        // The endless event stream is tested by SocketTests; schema-valid GeoJSON can still be geometrically
        // invalid (422), and unknown query parameters are ignored, hence the two excluded checks. Webhook
        // registration is excluded: a generated public URL would be accepted and then sent events, and
        // tests send traffic to loopback only (IntegrationRouteTests cover it).
        process.arguments = ["run", "http://127.0.0.1:\(server.port)/openapi.json", "-H", "Authorization: Bearer \(secret)",
                             "--checks", "all", "--exclude-checks", "positive_data_acceptance,negative_data_rejection",
                             "--exclude-path", "/v1/events/stream", "--exclude-operation-id", "registerWebhook",
                             "--request-timeout", "10", "--max-examples", "20",
                             "--seed", "1", "--no-color"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        // Wait off the concurrency pool: other tests and their servers need its few threads meanwhile.
        let report = try await offThePool {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return data
        }
        let text = String(decoding: report, as: UTF8.self)
        #expect(process.terminationStatus == 0, "schemathesis failed:\n\(text.suffix(6000))")
    }
}
