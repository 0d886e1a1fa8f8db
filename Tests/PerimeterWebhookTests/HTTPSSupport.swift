import Foundation
import PerimeterGeoJSON
import PerimeterTestSupport

/// scripts/webhook-receiver.py run as a child process: a receiver written with Python's own
/// http.server, ssl and hmac, so what it says about TLS and signatures does not depend on our code.
final class WebhookReceiverProcess: @unchecked Sendable {
    /// One request as the receiver printed it.
    struct Request: Sendable {
        var path: String
        var headers: [String: String]
        var body: [UInt8]
        /// `address:port` of the client: equal for requests on one connection.
        var peer: String
        /// The common name of the client certificate, when mutual TLS is on.
        var clientCertificate: String?
        /// With `--secret`: whether Python's HMAC check of `Perimeter-Signature` passed.
        var signatureValid: Bool?
    }

    enum Failure: Error, CustomStringConvertible {
        case didNotStart(String)
        var description: String {
            switch self { case .didNotStart(let why): "webhook-receiver.py did not start: \(why)" }
        }
    }

    let port: UInt16
    private let process = Process()
    private let lines = Locked<[Request]>([])
    private let finished = DispatchSemaphore(value: 0)

    /// Starts the receiver with `arguments` (see the script's help) and waits until it listens.
    init(_ arguments: [String]) throws {
        let script = Fixtures.repositoryRoot.appendingPathComponent("scripts/webhook-receiver.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = output.fileHandleForReading
        let first = DispatchSemaphore(value: 0)
        let portBox = Locked<UInt16?>(nil)
        let lines = self.lines
        let finished = self.finished
        let thread = Thread {
            var pending = Data()
            var announced = false
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 10) {
                    let line = Array(pending[pending.startIndex..<newline])
                    pending.removeSubrange(pending.startIndex...newline)
                    guard let json = try? JSONParser().parse(line) else { continue }
                    if !announced {
                        announced = true
                        portBox.withLock { $0 = json["port"]?.int64Value.flatMap { UInt16(exactly: $0) } }
                        first.signal()
                        continue
                    }
                    var headers: [String: String] = [:]
                    if case .object(let members)? = json["headers"] {
                        for (name, value) in members { headers[name] = value.stringValue }
                    }
                    let request = Request(
                        path: json["path"]?.stringValue ?? "", headers: headers,
                        body: [UInt8](Data(base64Encoded: json["body"]?.stringValue ?? "") ?? Data()),
                        peer: json["peer"]?.stringValue ?? "", clientCertificate: json["clientCertificate"]?.stringValue,
                        signatureValid: json["signatureValid"]?.boolValue)
                    lines.withLock { $0.append(request) }
                }
            }
            if !announced { first.signal() }
            finished.signal()
        }
        thread.start()
        guard first.wait(timeout: .now() + 20) == .success, let port = portBox.current else {
            kill(process.processIdentifier, SIGKILL)
            throw Failure.didNotStart("no port announced within 20 s")
        }
        self.port = port
    }

    /// `scheme://host:PORT/hook`.
    func url(scheme: String = "https", host: String = "127.0.0.1") -> String { "\(scheme)://\(host):\(port)/hook" }

    /// Every request printed so far.
    var requests: [Request] { lines.current }

    /// Stops the receiver (SIGKILL: a child started from a test thread may inherit a mask that
    /// blocks SIGTERM) and waits for its output to end.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = finished.wait(timeout: .now() + 5)
    }
}

/// A throw-away CA, a server certificate for 127.0.0.1 (and no host name) and a client certificate,
/// made with the openssl command; plus a second CA that signed nothing we use.
final class TestCertificates: Sendable {
    let folder = TemporaryFolder(prefix: "perimeter-tls")
    var caCertificate: String { folder.path("ca.pem") }
    var serverCertificate: String { folder.path("server.pem") }
    var serverKey: String { folder.path("server.key") }
    var clientCertificate: String { folder.path("client.pem") }
    var clientKey: String { folder.path("client.key") }
    var otherCA: String { folder.path("other-ca.pem") }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init() throws {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509", "-new"] + ec + ["-keyout", folder.path("ca.key"), "-out", caCertificate,
                     "-days", "2", "-subj", "/CN=Perimeter Test CA"])
        try openssl(["req", "-x509", "-new"] + ec + ["-keyout", folder.path("other-ca.key"), "-out", otherCA,
                     "-days", "2", "-subj", "/CN=Some Other CA"])
        try issue("server", subject: "/CN=127.0.0.1", extensions: "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
        try issue("client", subject: "/CN=perimeter-webhooks", extensions: "extendedKeyUsage=clientAuth\n")
    }

    private func issue(_ name: String, subject: String, extensions: String) throws {
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-new"] + ec + ["-keyout", folder.path("\(name).key"), "-out", folder.path("\(name).csr"), "-subj", subject])
        try (extensions + "basicConstraints=CA:FALSE\n").write(toFile: folder.path("\(name).ext"), atomically: true, encoding: .utf8)
        try openssl(["x509", "-req", "-in", folder.path("\(name).csr"), "-CA", caCertificate, "-CAkey", folder.path("ca.key"),
                     "-set_serial", name == "server" ? "2" : "3", "-days", "2", "-extfile", folder.path("\(name).ext"),
                     "-out", folder.path("\(name).pem")])
    }

    private func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let errors = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "openssl \(arguments.joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}
