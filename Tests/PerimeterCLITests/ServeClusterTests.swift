import Foundation
import PerimeterTestSupport
import Testing

/// `perimeter serve --nats`: the API node's flags, and the real executable as an API node of a
/// cluster on a real `nats-server`.
@Suite("perimeter serve --nats")
struct ServeClusterTests {
    @Test func theClusterFlagsAreExplainedAndChecked() {
        let help = perimeter("serve", "--help").output
        for flag in ["--nats URL", "--partitions N", "--replicas N", "--lease SECONDS", "--prefix NAME", "--wait-for-cluster SECONDS"] {
            #expect(help.contains(flag), "\(flag) missing from serve --help")
        }
        let both = perimeter("serve", "--nats", "nats://127.0.0.1:4222", "--db", "x.sqlite", "--port", "0")
        #expect(both.status == 64)
        #expect(both.error.contains("--db and --nats"), "\(both.error)")
        let prefix = perimeter("serve", "--nats", "nats://127.0.0.1:4222", "--prefix", "a.b", "--port", "0")
        #expect(prefix.status == 64)
        #expect(prefix.error.contains("--prefix 'a.b'"), "\(prefix.error)")
        let partitions = perimeter("serve", "--nats", "nats://127.0.0.1:4222", "--partitions", "0", "--port", "0")
        #expect(partitions.status == 64)
        #expect(partitions.error.contains("partitions"), "\(partitions.error)")
        let empty = perimeter("serve", "--nats", ",", "--port", "0")
        #expect(empty.status == 64)
        #expect(empty.error.contains("at least one URL"), "\(empty.error)")
    }

    @Test func aClusterThatDoesNotAnswerStopsTheServerNamingTheURLs() throws {
        try NATSServer.withRefusingPort { port in
            // Two seconds of patience: one more try, said on standard error, then the failure.
            let run = perimeter("serve", "--nats", "nats://127.0.0.1:\(port)", "--port", "0", "--wait-for-cluster", "2")
            #expect(run.status != 0)
            #expect(run.error.contains("the cluster is not ready, trying again: NATS: connect"), "\(run.error)")
            #expect(run.error.contains("cannot open the cluster at nats://127.0.0.1:\(port)"), "\(run.error)")
        }
    }

    @Test(.disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
    func theExecutableServesAsAnAPINodeUntilInterrupted() async throws {
        let executable = try #require(perimeterExecutable(), "perimeter executable not built next to the tests")
        let nats = try NATSServer.start(name: "serve-cluster")
        defer { nats.stop() }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", "--nats", nats.url, "--port", "0", "--partitions", "8", "--prefix", "clitest"]
        defer { if process.isRunning { process.terminate() } }
        let text = try await outputUntilInterrupted(process, after: "SIGTERM or Ctrl-C stops\n")
        #expect(process.terminationStatus == 0, "\(text)")
        #expect(text.contains("API node of cluster 'clitest' at \(nats.url) (8 partitions, 1 replica); 0 events read"), "\(text)")
        #expect(text.contains("database in memory"), "\(text)")
        #expect(text.hasSuffix("perimeter: stopped\n"), "\(text)")
    }
}
