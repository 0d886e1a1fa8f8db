import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `POST /v1/locations`: one update object, a JSON array of them, or NDJSON (content type
    /// `application/x-ndjson` or `application/ndjson`). Answers `{"accepted", "rejected": [{index,
    /// pointer, code, detail}], "events"}`; bad items are rejected one by one, the rest processed in one call.
    func postLocations(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let items = try Self.locationItems(request)
        guard items.count <= configuration.maximumBatchSize else {
            throw Problem(413, "batch-too-large", title: "Batch too large",
                          detail: "\(items.count) updates in one request; at most \(configuration.maximumBatchSize) are allowed",
                          extra: ["limit": .integer(Int64(configuration.maximumBatchSize))])
        }
        var updates: [LocationUpdate] = []
        var origins: [Int] = []
        var rejected: [(Int, JSONValue)] = []
        updates.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            switch item {
            case .value(let value, let path):
                do throws(LocationDecoder.Failure) {
                    updates.append(try LocationDecoder.decode(value, at: path))
                    origins.append(index)
                } catch {
                    rejected.append((index, ["index": .integer(Int64(index)), "code": "invalidField",
                                             "pointer": .string(error.path.jsonPointer), "path": .string(error.path.description),
                                             "detail": .string(error.message)]))
                    metrics.recordRejectedUpdate(reason: "invalidField")
                }
            case .broken(let failure):
                rejected.append((index, failure))
                metrics.recordRejectedUpdate(reason: "invalidJSON")
            }
        }
        let result: BatchResult
        do throws(GeofencingError) {
            result = try service.process(updates)
        } catch {
            throw error.problem
        }
        for rejection in result.rejections {
            let index = origins[rejection.index]
            rejected.append((index, ["index": .integer(Int64(index)), "code": .string(rejection.error.code.rawValue),
                                     "detail": .string(rejection.error.message)]))
            metrics.recordRejectedUpdate(reason: rejection.error.code.rawValue)
        }
        rejected.sort { $0.0 < $1.0 }
        if items.count == 1, case .value(_, let path)? = items.first, path.components.isEmpty,
           case .object(let rejection)? = rejected.first?.1 {
            // A single update (not an array) that was rejected: answer with a problem document.
            throw Problem(422, "location-rejected", title: "Location rejected",
                          detail: rejection["detail"]?.stringValue ?? "the update was rejected",
                          pointer: rejection["pointer"]?.stringValue, extra: rejection.filter { $0.key == "code" || $0.key == "path" })
        }
        let accepted = updates.count - result.rejections.count
        // Positions for stream clients that asked for them (?locations=true): accepted updates only.
        let rejectedIndexes = Set(result.rejections.map(\.index))
        hub.publishLocations(updates.enumerated().lazy.filter { !rejectedIndexes.contains($0.offset) }.map(\.element))
        metrics.recordUpdates(accepted: accepted)
        var fences: [String: Fence?] = [:]
        let events: [JSONValue] = result.events.map { logged in
            let id = logged.event.fence
            if fences[id.rawValue] == nil { fences[id.rawValue] = .some((try? service.fence(id: id)) ?? nil) }
            return EventJSON.value(logged, fence: fences[id.rawValue] ?? nil)
        }
        return Self.json(["accepted": .integer(Int64(accepted)), "rejected": .array(rejected.map(\.1)),
                          "events": .array(events)])
    }

    /// Splits the body into items: each a value with its path, or a rejection document (NDJSON line
    /// that is not JSON).
    static func locationItems(_ request: HTTPRequest) throws(Problem) -> [LocationItem] {
        let type = (request.header("content-type") ?? "").lowercased()
        if type.hasPrefix("application/x-ndjson") || type.hasPrefix("application/ndjson") {
            var items: [LocationItem] = []
            var lineNumber = 0
            for line in request.body.split(separator: 10, omittingEmptySubsequences: false) {
                lineNumber += 1
                let trimmed = line.last == 13 ? line.dropLast() : line
                if trimmed.allSatisfy({ $0 == 32 || $0 == 9 }) { continue }
                let index = items.count
                do throws(JSONParseError) {
                    items.append(.value(try JSONParser().parse(Array(trimmed)), JSONPath([.index(index)])))
                } catch {
                    items.append(.broken(["index": .integer(Int64(index)), "code": "invalidJSON",
                                           "line": .integer(Int64(lineNumber)),
                                           "detail": .string("line \(lineNumber), column \(error.column): \(error.message)")]))
                }
            }
            guard !items.isEmpty else { throw Problem.badRequest("empty-body", "the NDJSON body holds no update") }
            return items
        }
        let value = try parseJSON(request.body)
        if case .array(let elements) = value {
            return elements.enumerated().map { .value($0.element, JSONPath([.index($0.offset)])) }
        }
        return [.value(value, JSONPath())]
    }
}

/// One item of a location batch: a JSON value and its path, or the rejection of an unreadable NDJSON line.
enum LocationItem {
    case value(JSONValue, JSONPath)
    case broken(JSONValue)
}
