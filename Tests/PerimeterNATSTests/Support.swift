import Foundation
import PerimeterNATS
import PerimeterTestSupport
import Testing

/// The partition counts the shared server maps (`ptest.in<N>.*` → `ptest.out<N>.<partition>.<token>`).
let mappedPartitionCounts = [7, 64]

/// One JetStream server for the single-server tests of this target, started on first use and killed
/// when the test process exits (NATSServer's registry). Tests keep apart by unique stream, subject and
/// bucket names.
enum SharedServer {
    static let server: Result<NATSServer, any Error> = Result {
        let mappings = mappedPartitionCounts.map { n in
            "    \"ptest.in\(n).*\": \"ptest.out\(n).{{partition(\(n),1)}}.{{wildcard(1)}}\""
        }.joined(separator: "\n")
        return try NATSServer.start(name: "shared", extraConfiguration: "mappings {\n\(mappings)\n}\n")
    }

    /// A new connection and JetStream context on the shared server.
    static func jetStream() throws -> JetStream {
        let server = try server.get()
        return try JetStream(NATSConnection(urls: [server.url], name: "perimeter-nats-tests"))
    }
}

/// A name no other test uses (streams, buckets, subjects).
func unique(_ prefix: String) -> String {
    "\(prefix)_\(UUID().uuidString.prefix(8).lowercased())"
}

/// A failed expectation inside a body that runs off the pool (where `#expect` cannot record).
struct Failed: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Throws ``Failed`` unless `condition` holds.
func check(_ condition: Bool, _ message: @autoclosure () -> String, file: StaticString = #filePath, line: UInt = #line) throws {
    if !condition { throw Failed("\(message()) (\(file):\(line))") }
}

/// Retries `body` until it does not throw, for at most `seconds` (a new cluster elects its JetStream
/// leaders for a few seconds before it answers).
@discardableResult
func eventually<T>(seconds: Double = 30, _ body: () throws -> T) throws -> T {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        do { return try body() } catch {
            if Date() > deadline { throw error }
            usleep(200_000)
        }
    }
}

extension String {
    /// The UTF-8 bytes.
    var bytes: [UInt8] { Array(utf8) }
}
