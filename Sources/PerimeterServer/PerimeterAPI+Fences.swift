import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `PUT /v1/fences/{id}`: creates (201) or replaces (200) the fence from a GeoJSON Feature.
    func putFence(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        var feature = try Self.readFeatures(request.body, expectCollection: false)[0]
        if let given = feature.id, given.description != id {
            throw Problem(422, "id-mismatch", title: "Fence id mismatch",
                          detail: "the feature's id \"\(given)\" differs from the id in the path, \"\(id)\"; omit it or make them equal",
                          pointer: "/id")
        }
        feature.id = .string(id)
        let existed = (try? service.feature(id: FenceID(id))) != nil
        do throws(GeofencingError) {
            try service.addFeature(feature)
        } catch {
            throw error.problem
        }
        return Self.jsonBytes(Self.featureBytes(feature), status: existed ? 200 : 201)
    }

    /// `POST /v1/fences`: adds or replaces every feature of a FeatureCollection, atomically.
    func importFences(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let (features, texts) = try Self.readFeatureCollection(request.body)
        for (index, feature) in features.enumerated() {
            guard let id = feature.id else {
                throw Problem(422, "missing-id", title: "A feature has no id",
                              detail: "feature \(index) has no id; every fence needs one (nothing was imported)",
                              pointer: "/features/\(index)/id", extra: ["index": .integer(Int64(index))])
            }
            if let violation = RequestID.violation(id.description, name: "id") {
                var problem = RequestID.bodyProblem(violation + " (nothing was imported)",
                                                    at: JSONPath([.key("features"), .index(index), .key("id")]))
                problem.extra["index"] = .integer(Int64(index))
                throw problem
            }
        }
        do throws(GeofencingError) {
            try service.addFeatures(features, utf8Texts: texts)
        } catch {
            throw error.problem
        }
        return Self.json(["imported": .integer(Int64(features.count))])
    }

    /// Imports a FeatureCollection file's features (for `--fences`), atomically.
    public func importFeatures(_ bytes: [UInt8]) throws(Problem) -> Int {
        let response = try importFences(HTTPRequest(method: "POST", path: "/v1/fences", body: bytes))
        if case .integer(let count)? = (try? JSONParser().parse(response.bodyBytes))?["imported"] { return Int(count) }
        return 0
    }

    /// `GET /v1/fences/{id}`.
    func getFence(_ id: String) throws(Problem) -> HTTPResponse {
        do throws(GeofencingError) {
            return Self.jsonBytes(Self.featureBytes(try service.feature(id: FenceID(id))))
        } catch {
            throw error.problem
        }
    }

    /// `DELETE /v1/fences/{id}`: 204.
    func deleteFence(_ id: String) throws(Problem) -> HTTPResponse {
        do throws(GeofencingError) {
            try service.removeFeature(id: FenceID(id))
        } catch {
            throw error.problem
        }
        return HTTPResponse(status: 204)
    }

    /// `DELETE /v1/fences?group=G`: removes a group; `DELETE /v1/fences?all=true`: removes every fence.
    /// Without either (or with both) nothing is removed: 400.
    func deleteGroup(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let group = request.query["group"].flatMap { $0.isEmpty ? nil : $0 }
        let all = request.query["all"]
        guard (group == nil) != (all == nil) else {
            throw Problem(400, "missing-parameter", title: "Missing query parameter",
                          detail: group == nil
                              ? "DELETE /v1/fences needs ?group=NAME, or ?all=true to delete every fence"
                              : "give either ?group=NAME or ?all=true, not both",
                          extra: ["parameter": group == nil ? "group" : "all"])
        }
        if let all, all != "true" {
            throw Problem(400, "invalid-parameter", title: "Invalid query parameter",
                          detail: "all must be exactly 'true' to delete every fence, not '\(all)'",
                          extra: ["parameter": "all"])
        }
        do throws(GeofencingError) {
            if let group {
                let removed = try service.removeFeatures(group: group)
                return Self.json(["removed": .integer(Int64(removed)), "group": .string(group)])
            }
            // Counted first: a fence added between the two calls is removed but not counted.
            let removed = try service.features().count
            try service.clearFeatures()
            return Self.json(["removed": .integer(Int64(removed)), "all": true])
        } catch {
            throw error.problem
        }
    }

    /// `GET /v1/fences?group=&limit=&cursor=`: a FeatureCollection page in id order; `nextCursor` is the
    /// last id of the page when more may follow.
    func listFences(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let limit = Int(try integer(request, "limit", default: 100, in: 1...1000))
        let cursor = request.query["cursor"]
        let all: [GeoJSON.Feature]
        do throws(GeofencingError) {
            all = try service.features(group: request.query["group"].flatMap { $0.isEmpty ? nil : $0 })
        } catch {
            throw error.problem
        }
        var page = all.filter { feature in
            guard let cursor else { return true }
            return FenceID(feature.id?.description ?? "") > FenceID(cursor)
        }
        page.sort { FenceID($0.id?.description ?? "") < FenceID($1.id?.description ?? "") }
        let more = page.count > limit
        page = Array(page.prefix(limit))
        var features: [JSONValue] = []
        features.reserveCapacity(page.count)
        for feature in page {
            features.append((try? JSONParser().parse(Self.featureBytes(feature))) ?? .null)
        }
        var body: [String: JSONValue] = ["type": "FeatureCollection", "features": .array(features)]
        body["nextCursor"] = more ? .string(page.last?.id?.description ?? "") : .null
        return Self.json(.object(body))
    }

    static func featureBytes(_ feature: GeoJSON.Feature) -> [UInt8] {
        var bytes: [UInt8] = []
        JSONWriter().write(feature, into: &bytes)
        return bytes
    }

    /// Reads a Feature (or, with `expectCollection`, a FeatureCollection) with full validation.
    ///
    /// The reader checks JSON syntax as strictly as ``parseJSON(_:)`` (they share the tokenizer), so the
    /// body is parsed once; only a body the reader refuses is parsed again, to answer a syntax error with
    /// the 400 that every endpoint gives for one.
    static func readFeatures(_ body: [UInt8], expectCollection: Bool) throws(Problem) -> [GeoJSON.Feature] {
        try readFeatures(GeoJSONReader().read(body), body, expectCollection: expectCollection)
    }

    /// Reads a FeatureCollection with full validation (``readFeatures(_:expectCollection:)``); also the
    /// JSON text of each feature as it is in `body`, which the store keeps instead of writing it anew:
    /// slices of `body`, not copies (the reader has checked that they are UTF-8).
    static func readFeatureCollection(_ body: [UInt8]) throws(Problem) -> (features: [GeoJSON.Feature], texts: [ArraySlice<UInt8>]) {
        let result = GeoJSONReader().read(body)
        let features = try readFeatures(result, body, expectCollection: true)
        return (features, result.featureByteRanges.map { body[$0] })
    }

    private static func readFeatures(_ result: GeoJSONReadResult, _ body: [UInt8], expectCollection: Bool) throws(Problem) -> [GeoJSON.Feature] {
        if result.hasErrors {
            _ = try parseJSON(body)
            let errors = result.errors
            let first = errors[0]
            throw Problem(422, "invalid-geojson", title: "Invalid GeoJSON",
                          detail: "\(errors.count) problem(s); first: \(first.path): \(first.message)",
                          pointer: first.path.jsonPointer,
                          extra: ["errors": .array(errors.prefix(100).map { problem in
                              .object(["detail": .string(problem.message), "pointer": .string(problem.path.jsonPointer),
                                       "path": .string(problem.path.description)])
                          })])
        }
        switch result.object {
        case .feature(let feature)? where !expectCollection:
            return [feature]
        case .featureCollection(let collection)? where expectCollection:
            return collection.features
        default:
            throw Problem(422, "wrong-geojson-type", title: "Wrong GeoJSON type",
                          detail: expectCollection ? "the body must be a GeoJSON FeatureCollection"
                                                   : "the body must be a GeoJSON Feature", pointer: "/type")
        }
    }
}
