// Shared by the `routes` and `api` targets: a fake request from fuzz bytes, handled in process by a
// PerimeterAPI on an in-memory service (no socket, no disk), with the checks every response must pass.
import PerimeterHTTP
import PerimeterGeoJSON
import PerimeterServer
import PerimeterService

enum FuzzAPI {
    /// An API on an in-memory service.
    static func api() -> PerimeterAPI {
        let service = GeofencingService()
        try! service.configure(GeofencingOptions(defaultDwellTime: 60))
        var configuration = APIConfiguration()
        configuration.maximumBodySize = 1 << 16
        return PerimeterAPI(service: service, configuration: configuration)
    }

    /// The API of every input (`routes` creates nothing with its empty bodies; `api` does).
    static let shared = api()

    static let methods = ["GET", "PUT", "POST", "DELETE", "HEAD", "PATCH"]

    /// Splits `target` (`/path?a=1&b=2`) into the raw path and its query parameters, as a transport would.
    static func request(method: String, target: String, headers: [String: String] = [:], body: [UInt8] = []) -> HTTPRequest {
        var query: [String: String] = [:]
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query[String(kv[0])] = kv.count == 2 ? String(kv[1]) : ""
            }
        }
        return HTTPRequest(method: method, path: String(parts[0]), query: query, headers: headers, body: body,
                           remoteAddress: "127.0.0.1")
    }

    /// Handles `request` and checks the response: a real status; a problem document (status ≥ 400 with
    /// a body) is JSON whose `status` is the response's; an event stream is finished so it holds nothing.
    static func check(_ request: HTTPRequest, on api: PerimeterAPI) {
        // The one handler path production uses, answered through a collecting responder; exactly once.
        // Committed as the server's event loops do (`.caller`, then `commitWaiting()` after the round):
        // the default, the service's committer thread, costs a thread hop and a `sched_yield` per write —
        // most of the time of a write request, and more under other processes' load.
        let responder = CollectingResponder()
        // A commit already at work on another thread (a simulation's) makes `commitWaiting()` return
        // at once; then commit again until the answer comes.
        api.handle(request, responder: responder, committer: .caller)
        var answer: HTTPResponse?, tries = 0
        while answer == nil, tries < 1000 {
            api.service.commitWaiting()
            answer = responder.response(timeout: tries == 0 ? 0 : 0.01)
            tries += 1
        }
        guard let response = answer else { fatalError("\(request.method) \(request.path): no answer") }
        guard responder.answerCount == 1 else { fatalError("\(request.method) \(request.path): \(responder.answerCount) answers") }
        guard (100..<600).contains(response.status) else { fatalError("status \(response.status)") }
        switch response.body {
        case .stream(let stream):
            stream.finish()
        default:
            let bytes = response.bodyBytes
            if response.status >= 400, !bytes.isEmpty, request.method != "HEAD" {
                guard let problem = try? JSONParser().parse(bytes) else {
                    fatalError("\(request.method) \(request.path): a \(response.status) body that is not JSON")
                }
                guard problem["status"]?.doubleValue == Double(response.status) else {
                    fatalError("\(request.method) \(request.path): problem status \(String(describing: problem["status"])) on a \(response.status)")
                }
            }
        }
    }
}
