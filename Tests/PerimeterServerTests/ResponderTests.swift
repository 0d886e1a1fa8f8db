import Foundation
@testable import PerimeterHTTP
import PerimeterTestSupport
import Synchronization
import Testing

@Suite("Transport: answers given later through HTTPResponder", .serialized)
struct ResponderTests {
    /// Requests answered later from other threads, in an order other than their arrival: each client
    /// gets its own answer, and one loop thread serves every connection meanwhile (suspended
    /// connections hold no thread).
    @Test func laterAnswersReachTheirClients() throws {
        let pending = Mutex<[(String, HTTPResponder)]>([])
        let server = try HTTPServer(configuration: .init(port: 0, threads: 1)) { request, responder in
            if request.path == "/now" {
                responder.respond(HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("now".utf8)))
            } else {
                pending.withLock { $0.append((request.path, responder)) }
            }
        }
        defer { server.stop() }
        let clients = try (0..<6).map { _ in try TestClient(port: server.port) }
        for (k, client) in clients.enumerated() { try client.send("GET", "/later/\(k)") }
        // Held answers do not block the single loop thread.
        #expect(try TestClient(port: server.port).request("GET", "/now").text == "now")
        #expect(waitUntil { pending.withLock { $0.count } == clients.count })
        // Unanswered after their round, each held request is suspended (once) until its answer comes.
        #expect(waitUntil { server.suspensions == clients.count }, "\(server.suspensions) of \(clients.count) suspended")
        let held = pending.withLock { list -> [(String, HTTPResponder)] in
            defer { list = [] }
            return list
        }
        // Answer in reverse order, from other threads; a second answer is ignored.
        let answered = DispatchGroup()
        for (path, responder) in held.reversed() {
            answered.enter()
            Thread {
                responder.respond(building: { HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("answer \(path)".utf8)) })
                responder.respond(HTTPResponse(status: 500))
                answered.leave()
            }.start()
        }
        answered.wait()
        for (k, client) in clients.enumerated() {
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "answer /later/\(k)")
            // The connection stays usable (keep-alive) after a later answer.
            try client.send("GET", "/now")
            #expect(try client.readResponse().text == "now")
        }
        #expect(server.suspensions == clients.count, "each held request was suspended once")
    }

    /// Requests that the loop's round hook answers go out without suspending their connections, round
    /// after round, on every keep-alive connection.
    @Test func theRoundHookAnswersWithoutSuspending() throws {
        let held = Mutex<[HTTPResponder]>([])
        let answeringRounds = Atomic<Int>(0)
        let server = try HTTPServer(configuration: .init(port: 0, threads: 1), responder: { request, responder in
            held.withLock { $0.append(responder) }
        }, afterEachRound: {
            let round = held.withLock { list -> [HTTPResponder] in
                defer { list = [] }
                return list
            }
            for responder in round {
                responder.respond(HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("round".utf8)))
            }
            if !round.isEmpty { answeringRounds.add(1, ordering: .relaxed) }
            return !round.isEmpty
        })
        defer { server.stop() }
        let clients = try (0..<8).map { _ in try TestClient(port: server.port) }
        for _ in 0..<3 {
            for client in clients { try client.send("GET", "/held") }
            for client in clients { #expect(try client.readResponse().text == "round") }
        }
        #expect(server.suspensions == 0)
        #expect(answeringRounds.load(ordering: .relaxed) >= 3)
    }

    /// A request head that fits the connection's buffer is served; one that does not is refused with
    /// a 4xx status and the server goes on serving.
    @Test func requestHeadsLargerThanTheBufferAreRefused() throws {
        let server = try HTTPServer(configuration: .init(port: 0, threads: 1)) { request in
            HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("\(request.header("x-pad")?.count ?? 0)".utf8))
        }
        defer { server.stop() }
        let fits = try TestClient(port: server.port).request("GET", "/", headers: ["X-Pad": String(repeating: "a", count: 6_000)])
        #expect(fits.status == 200 && fits.text == "6000")
        let tooLarge = try TestClient(port: server.port).request("GET", "/", headers: ["X-Pad": String(repeating: "a", count: 40_000)])
        #expect((400..<500).contains(tooLarge.status), "status \(tooLarge.status)")
        #expect(try TestClient(port: server.port).request("GET", "/").status == 200)
    }

    /// A handler that stops its own server (on a loop's thread) neither hangs nor crashes: the stop
    /// finishes on another thread once the loops have ended, and the port is closed afterwards.
    @Test func aServerStoppedFromItsOwnHandlerStops() throws {
        let box = Mutex<HTTPServer?>(nil)
        let server = try HTTPServer(configuration: .init(port: 0, threads: 2)) { request in
            if request.path == "/stop" { box.withLock { $0 }?.stop(drainTimeout: 0) }
            return HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("ok".utf8))
        }
        box.withLock { $0 = server }
        let port = server.port
        #expect(try TestClient(port: port).request("GET", "/").text == "ok")
        let client = try TestClient(port: port)
        try client.send("GET", "/stop")
        _ = try? client.readResponse()
        #expect(!server.isRunning)
        #expect(waitUntil { (try? TestClient(port: port, timeout: 1)) == nil }, "the port is closed")
        box.withLock { $0 = nil }
    }

    /// Servers started on port 0 side by side get ports of their own, and each answers only for itself
    /// on every connection (daemons that let the system pick a port with `SO_REUSEPORT` set could be
    /// given the same port and share each other's connections).
    @Test func serversOnFreePortsDoNotShareConnections() throws {
        let servers = try (0..<8).map { k in
            try HTTPServer(configuration: .init(port: 0, threads: 2)) { _ in
                HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("server \(k)".utf8))
            }
        }
        defer { for server in servers { server.stop() } }
        #expect(Set(servers.map(\.port)).count == servers.count)
        for (k, server) in servers.enumerated() {
            for _ in 0..<4 {
                #expect(try TestClient(port: server.port).request("GET", "/").text == "server \(k)")
            }
        }
    }

    /// The loops share one listening socket: a second server on a port in use is refused, and the first
    /// goes on serving on all of its loops.
    @Test func aPortInUseIsRefused() throws {
        let first = try HTTPServer(configuration: .init(port: 0, threads: 2)) { _ in
            HTTPResponse(status: 200, contentType: "text/plain", bytes: Array("first".utf8))
        }
        defer { first.stop() }
        #expect(throws: HTTPServerError.self) {
            _ = try HTTPServer(configuration: .init(port: first.port, threads: 2)) { _ in HTTPResponse(status: 500) }
        }
        for _ in 0..<4 {
            #expect(try TestClient(port: first.port).request("GET", "/").text == "first")
        }
    }

    /// A request whose answer never comes is answered 503 when the server stops, instead of holding the
    /// stop forever.
    @Test func stopAnswersWhatWasNeverAnswered() throws {
        let held = Mutex<HTTPResponder?>(nil)
        let server = try HTTPServer(configuration: .init(port: 0, threads: 1)) { _, responder in
            held.withLock { $0 = responder }
        }
        let client = try TestClient(port: server.port)
        try client.send("GET", "/never")
        #expect(waitUntil { held.withLock { $0 != nil } })
        server.stop(drainTimeout: 0.2)
        let response = try client.readResponse()
        #expect(response.status == 503)
        #expect(held.withLock { $0?.hasAnswered } == true)
    }
}

@Suite("POST /v1/locations over a socket answers as the in-process handler", .serialized)
struct DeferredLocationTests {
    /// The server answers location posts after their commit (through a responder); the answers —
    /// accepted, rejected single updates, mixed batches, broken JSON, wrong types — are byte for byte
    /// those the in-process API (``T/call``, a `CollectingResponder`) gives on a second server in the same state.
    @Test func socketAnswersEqualInProcessAnswers() throws {
        let paths = [SocketTests.temporaryDatabase(), SocketTests.temporaryDatabase()]
        let remote = try SocketTests.start(paths[0]), local = try SocketTests.start(paths[1])
        defer {
            remote.stop()
            local.stop()
            paths.forEach(SocketTests.remove)
        }
        let client = try TestClient(port: remote.port)
        #expect(try client.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)
        #expect(T.call(local.api, "PUT", "/v1/fences/park", body: T.square(name: "Park")).status == 201)
        let bodies: [String] = [
            T.json(T.update("car", 0, inside: false)),
            T.json(T.update("car", 5, inside: true)),
            T.json(T.update("car", 4, inside: false)),  // out of order: 422
            #"{"deviceId":"car","latitude":91,"longitude":0,"time":"2024-01-01T00:00:10Z"}"#,
            T.json([T.update("bus", 0, inside: true), T.update("bus", 1, inside: false), "oops"]),
            #"[{"deviceId":"bus","latitude":"x"}"#,
            #"{"deviceId":7}"#,
        ]
        for body in bodies {
            let overSocket = try client.request("POST", "/v1/locations", headers: ["Content-Type": "application/json"],
                                                body: Array(body.utf8))
            let inProcess = T.call(local.api, "POST", "/v1/locations", headers: ["Content-Type": "application/json"], body: body)
            #expect(overSocket.status == inProcess.status, "\(body)")
            #expect(overSocket.text == String(decoding: inProcess.bodyBytes, as: UTF8.self), "\(body)")
            #expect(overSocket.headers["content-type"] == inProcess.header("Content-Type"), "\(body)")
        }
    }
}
