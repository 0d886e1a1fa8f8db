import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `POST /v1/locations`: one update object, a JSON array of them, or NDJSON (content type
    /// `application/x-ndjson` or `application/ndjson`). Answers `{"accepted", "rejected": [{index,
    /// pointer, code, detail}], "events"}`; bad items are rejected one by one, the rest processed in one call.
    /// `?properties=false` leaves the fences' properties out of the events.
    ///
    /// The answer is given through `reply` once the updates are stored, by a commit that `call`'s
    /// committer makes for many requests at once; the response is built on the responder's thread.
    func postLocations(_ call: EndpointCall, _ reply: Reply) throws(Problem) {
        let locations = try prepareLocations(call.request)
        service.process(locations.updates, committer: call.committer) { [self] outcome in
            reply.respond { [self] () throws(Problem) in try finishLocations(locations, outcome) }
        }
    }

    /// A decoded `POST /v1/locations` body, between decoding and processing.
    struct LocationsCall: Sendable {
        /// The decoded body.
        var batch: LocationBatch
        /// Items rejected while decoding: (index in the body, rejection document).
        var rejected: [(Int, JSONValue)]
        /// Whether the answer's events carry their fence's properties (query parameter `properties`).
        var properties = true
        /// The updates to process.
        var updates: [LocationUpdate] { batch.updates }
    }

    /// Decodes and checks the body, and counts the items that cannot be decoded.
    func prepareLocations(_ request: HTTPRequest) throws(Problem) -> LocationsCall {
        let properties = try eventProperties(request)
        let batch = try Self.locationBatch(request)
        guard batch.count <= configuration.maximumBatchSize else {
            throw Problem(413, "batch-too-large", title: "Batch too large",
                          detail: "\(batch.count) updates in one request; at most \(configuration.maximumBatchSize) are allowed",
                          extra: ["limit": .integer(Int64(configuration.maximumBatchSize))])
        }
        var rejected: [(Int, JSONValue)] = []
        for invalid in batch.invalid {
            let error = invalid.failure
            rejected.append((invalid.index, ["index": .integer(Int64(invalid.index)), "code": "invalidField",
                                             "pointer": .string(error.path.jsonPointer), "path": .string(error.path.description),
                                             "detail": .string(error.message)]))
            metrics.recordRejectedUpdate(reason: "invalidField")
        }
        for broken in batch.broken {
            rejected.append((broken.index, broken.document))
            metrics.recordRejectedUpdate(reason: "invalidJSON")
        }
        return LocationsCall(batch: batch, rejected: rejected, properties: properties)
    }

    /// The answer once the service processed the updates (or failed to).
    func finishLocations(_ call: LocationsCall, _ outcome: Result<BatchResult, GeofencingError>) throws(Problem) -> HTTPResponse {
        switch outcome {
        case .success(let result): return try finishLocations(call, result)
        case .failure(let error): throw error.problem
        }
    }

    /// The answer for processed updates: the rejections merged in body order, positions published to
    /// the stream, the counters, the response document.
    func finishLocations(_ call: LocationsCall, _ result: BatchResult) throws(Problem) -> HTTPResponse {
        let batch = call.batch, updates = call.updates
        var rejected = call.rejected
        for rejection in result.rejections {
            let index = batch.origins[rejection.index]
            rejected.append((index, ["index": .integer(Int64(index)), "code": .string(rejection.error.code.rawValue),
                                     "detail": .string(rejection.error.message)]))
            metrics.recordRejectedUpdate(reason: rejection.error.code.rawValue)
        }
        rejected.sort { $0.0 < $1.0 }
        if batch.isSingle, case .object(let rejection)? = rejected.first?.1 {
            // A single update (not an array) that was rejected: answer with a problem document.
            throw Problem(422, "location-rejected", title: "Location rejected",
                          detail: rejection["detail"]?.stringValue ?? "the update was rejected",
                          pointer: rejection["pointer"]?.stringValue, extra: rejection.filter { $0.key == "code" || $0.key == "path" })
        }
        let accepted = updates.count - result.rejections.count
        // Positions for stream clients that asked for them (?locations=true): accepted updates only.
        if result.rejections.isEmpty {
            hub.publishLocations(updates)
        } else {
            let rejectedIndexes = Set(result.rejections.map(\.index))
            hub.publishLocations(updates.enumerated().lazy.filter { !rejectedIndexes.contains($0.offset) }.map(\.element))
        }
        metrics.recordUpdates(accepted: accepted)
        return HTTPResponse(status: 200, contentType: "application/json",
                            bytes: locationsResponse(accepted: accepted, events: result.events, rejected: rejected,
                                                     properties: call.properties))
    }

    /// `{"accepted","events","rejected"}` written straight to bytes — what ``JSONWriter`` writes for the
    /// same object, events as ``GeofencingEvent/writeJSON(into:properties:)`` writes them.
    func locationsResponse(accepted: Int, events: [GeofencingEvent], rejected: [(Int, JSONValue)],
                           properties: Bool = true) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + events.count * 320)
        bytes.append(contentsOf: #"{"accepted":"#.utf8)
        JSONWriter.appendInteger(Int64(accepted), to: &bytes)
        bytes.append(contentsOf: #","events":["#.utf8)
        for (k, logged) in events.enumerated() {
            if k > 0 { bytes.append(UInt8(ascii: ",")) }
            logged.writeJSON(into: &bytes, properties: properties)
        }
        bytes.append(contentsOf: #"],"rejected":["#.utf8)
        let writer = JSONWriter()
        for (k, rejection) in rejected.enumerated() {
            if k > 0 { bytes.append(UInt8(ascii: ",")) }
            writer.write(rejection.1, into: &bytes)
        }
        bytes.append(contentsOf: "]}".utf8)
        return bytes
    }

    /// The decoded body: straight from the bytes (``LocationBatchReader``), through ``JSONValue`` trees
    /// where the reader declines. NDJSON when the content type is `application/x-ndjson` or `application/ndjson`.
    static func locationBatch(_ request: HTTPRequest) throws(Problem) -> LocationBatch {
        try LocationBatchReader.batch(request.body, ndjson: isNDJSON(request))
    }

    /// Whether the request's body is NDJSON (by its content type).
    static func isNDJSON(_ request: HTTPRequest) -> Bool {
        let type = (request.header("content-type") ?? "").lowercased()
        return type.hasPrefix("application/x-ndjson") || type.hasPrefix("application/ndjson")
    }
}
