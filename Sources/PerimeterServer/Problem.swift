import Foundation
import PerimeterGeoJSON
import PerimeterHTTP

/// An RFC 9457 problem document (`application/problem+json`): every error the API answers.
///
/// Besides `type`, `title`, `status`, `detail` and `instance` it may carry a JSON Pointer (`pointer`)
/// and JSONPath (`path`) to the offending part of the request body, and per-item `errors`.
public struct Problem: Error, Sendable {
    /// A short machine-readable kind, e.g. `invalid-json`; `type` is `urn:perimeter:problem:<slug>`.
    public var slug: String
    /// The HTTP status.
    public var status: Int
    /// A summary of the kind of problem (the same for every occurrence).
    public var title: String
    /// What went wrong this time and how to fix it.
    public var detail: String
    /// Where in the request body (RFC 6901 JSON Pointer), if known.
    public var pointer: String?
    /// Extra members (e.g. `errors`, `retryAfter`).
    public var extra: [String: JSONValue]
    /// Extra response headers (e.g. `Retry-After`, `WWW-Authenticate`).
    public var headers: [(name: String, value: String)]

    /// Creates a problem.
    public init(_ status: Int, _ slug: String, title: String, detail: String, pointer: String? = nil,
                extra: [String: JSONValue] = [:], headers: [(name: String, value: String)] = []) {
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.pointer = pointer
        self.extra = extra
        self.headers = headers
    }

    /// The `type` URI.
    public var type: String { "urn:perimeter:problem:" + slug }

    /// The problem document; `instance` is the request path.
    public func document(instance: String?) -> JSONValue {
        var object = extra
        object["type"] = .string(type)
        object["title"] = .string(title)
        object["status"] = .integer(Int64(status))
        object["detail"] = .string(detail)
        if let instance { object["instance"] = .string(instance) }
        if let pointer { object["pointer"] = .string(pointer) }
        return .object(object)
    }

    /// The HTTP response carrying this problem.
    public func response(instance: String?) -> HTTPResponse {
        var bytes: [UInt8] = []
        JSONWriter().write(document(instance: instance), into: &bytes)
        return HTTPResponse(status: status, contentType: "application/problem+json", bytes: bytes, headers: headers)
    }
}

extension Problem {
    static func badRequest(_ slug: String, _ detail: String, pointer: String? = nil) -> Problem {
        Problem(400, slug, title: "Bad request", detail: detail, pointer: pointer)
    }

    static func invalidJSON(_ error: JSONParseError) -> Problem {
        Problem(400, "invalid-json", title: "The body is not valid JSON",
                detail: "line \(error.line), column \(error.column) (byte \(error.offset)): \(error.message)",
                extra: ["line": .integer(Int64(error.line)), "column": .integer(Int64(error.column))])
    }

    static func notFound(_ detail: String) -> Problem {
        Problem(404, "not-found", title: "Not found", detail: detail)
    }

    static func invalidField(_ path: JSONPath, _ detail: String) -> Problem {
        Problem(422, "invalid-field", title: "A field of the body is invalid",
                detail: "\(path): \(detail)", pointer: path.jsonPointer, extra: ["path": .string(path.description)])
    }
}

extension JSONPath {
    /// The path as an RFC 6901 JSON Pointer (`/features/3/geometry/coordinates/0/1`).
    public var jsonPointer: String {
        var text = ""
        for component in components {
            text += "/"
            switch component {
            case .index(let index): text += String(index)
            case .key(let key):
                text += key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            }
        }
        return text
    }
}
