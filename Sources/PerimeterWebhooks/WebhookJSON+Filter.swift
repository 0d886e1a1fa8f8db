import PerimeterFences
import PerimeterGeoJSON

/// JSON forms of the webhook model: REST bodies (`WebhookJSON.filter`, `summary`, …) and the
/// documents the SQLite store keeps. Built as ``JSONValue`` and written with ``JSONWriter``.
public enum WebhookJSON {}

extension WebhookJSON {
    /// `{"devices":[…],"fences":[…],"groups":[…],"types":["entry",…]}` (sorted, empty members omitted).
    public static func filter(_ filter: WebhookFilter) -> JSONValue {
        var object: [String: JSONValue] = [:]
        if !filter.devices.isEmpty { object["devices"] = .array(filter.devices.sorted().map { .string($0) }) }
        if !filter.fences.isEmpty { object["fences"] = .array(filter.fences.sorted().map { .string($0) }) }
        if !filter.groups.isEmpty { object["groups"] = .array(filter.groups.sorted().map { .string($0) }) }
        if !filter.types.isEmpty { object["types"] = .array(filter.types.sorted().map { .string($0.rawValue) }) }
        return .object(object)
    }

    /// Reads a filter object; `null` or a missing value is the match-all filter. Singular keys
    /// (`device`, `fence`, `group`, `type`) taking one string are accepted too.
    ///
    /// - Parameter path: the JSON path of `value`, for error messages (`filter`).
    /// - Throws: ``WebhookError/Code/invalidArgument`` naming the offending member.
    public static func parseFilter(_ value: JSONValue?, path: String = "filter") throws(WebhookError) -> WebhookFilter {
        guard let value, !value.isNull else { return WebhookFilter() }
        guard let object = value.objectValue else {
            throw WebhookError(.invalidArgument, "\(path) must be an object", field: path)
        }
        let known: Set<String> = ["devices", "fences", "groups", "types", "device", "fence", "group", "type"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw WebhookError(.invalidArgument, "\(path).\(unknown) is not a filter member (use devices, fences, groups, types)", field: "\(path).\(unknown)")
        }
        var filter = WebhookFilter()
        filter.devices = try strings(object, plural: "devices", singular: "device", path: path)
        filter.fences = try strings(object, plural: "fences", singular: "fence", path: path)
        filter.groups = try strings(object, plural: "groups", singular: "group", path: path)
        let typeNames = try strings(object, plural: "types", singular: "type", path: path)
        for name in typeNames.sorted() {
            guard let kind = GeofenceEventKind(rawValue: name) else {
                let allowed = GeofenceEventKind.allCases.map(\.rawValue).joined(separator: ", ")
                throw WebhookError(.invalidArgument, "\(path).types has unknown event type \"\(name)\" (use \(allowed))", field: "\(path).types")
            }
            filter.types.insert(kind)
        }
        return filter
    }

    private static func strings(_ object: [String: JSONValue], plural: String, singular: String,
                                path: String) throws(WebhookError) -> Set<String> {
        var result: Set<String> = []
        if let one = object[singular], !one.isNull {
            guard let text = one.stringValue, !text.isEmpty else {
                throw WebhookError(.invalidArgument, "\(path).\(singular) must be a non-empty string", field: "\(path).\(singular)")
            }
            result.insert(text)
        }
        if let many = object[plural], !many.isNull {
            guard let array = many.arrayValue else {
                throw WebhookError(.invalidArgument, "\(path).\(plural) must be an array of strings", field: "\(path).\(plural)")
            }
            for (index, element) in array.enumerated() {
                guard let text = element.stringValue, !text.isEmpty else {
                    throw WebhookError(.invalidArgument, "\(path).\(plural)[\(index)] must be a non-empty string", field: "\(path).\(plural)[\(index)]")
                }
                result.insert(text)
            }
        }
        return result
    }
}
