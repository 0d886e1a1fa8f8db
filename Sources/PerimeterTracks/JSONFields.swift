import PerimeterGeoJSON

/// Turns parsed JSON (``JSONValue``) into record fields, for the JSON-based readers.
enum JSONFields {
    /// A JSON value as a field value (`nil` for null). Integers stay exact (`Int64`); `true`/`false` are
    /// booleans, never numbers.
    static func value(_ json: JSONValue) -> FieldValue? {
        switch json {
        case .null: return nil
        case .string(let text): return .text(text)
        case .integer(let integer): return .integer(integer)
        case .double(let double): return .number(double)
        case .bool(let flag): return .other(flag ? "true" : "false")
        case .array: return .other("an array")
        case .object: return .other("an object")
        }
    }

    /// The record fields of a JSON object: keys by alias, then the `properties` object's keys for the fields
    /// still missing, then `coordinates: [lon, lat]` (top level, in `geometry` or in `location`) when there is
    /// neither a latitude nor a longitude. When several keys name one field, the earlier alias in
    /// ``FieldRole/aliases`` wins; null values count as absent.
    /// - Complexity: O(number of members); key names are looked up in `keys`, which caches their roles.
    static func fields(of object: [String: JSONValue], keys: inout FieldKeyTable) -> [FieldValue?] {
        var fields = [FieldValue?](repeating: nil, count: FieldRole.allCases.count)
        fill(&fields, from: object, keys: &keys)
        if case .object(let properties)? = object["properties"] { fill(&fields, from: properties, keys: &keys) }
        if fields[FieldRole.latitude.rawValue] == nil, fields[FieldRole.longitude.rawValue] == nil {
            let coordinates = object["coordinates"] ?? object["geometry"]?["coordinates"] ?? object["location"]?["coordinates"]
            if case .array(let pair)? = coordinates, pair.count >= 2 {
                fields[FieldRole.longitude.rawValue] = value(pair[0])
                fields[FieldRole.latitude.rawValue] = value(pair[1])
            }
        }
        return fields
    }

    /// Fills the fields that are still `nil` from `members`, preferring earlier aliases.
    private static func fill(_ fields: inout [FieldValue?], from members: [String: JSONValue], keys: inout FieldKeyTable) {
        let alreadySet = fields.map { $0 != nil }
        var ranks = [Int](repeating: Int.max, count: fields.count)
        for (key, member) in members {
            guard let match = keys.match(key), !alreadySet[match.role.rawValue], match.rank < ranks[match.role.rawValue],
                  let field = value(member) else { continue }
            fields[match.role.rawValue] = field
            ranks[match.role.rawValue] = match.rank
        }
    }
}

/// The field role (and alias rank) of JSON key names, cached: NDJSON files repeat the same few keys on every line.
struct FieldKeyTable {
    /// A key's role and the index of its alias in ``FieldRole/aliases`` (lower is preferred).
    struct Match {
        var role: FieldRole
        var rank: Int
    }

    private var cache: [String: Match?] = [:]
    /// Cache size limit, so that a file with ever-new key names cannot grow the cache without bound.
    private let capacity = 1024

    /// The role of `key`, if it names a field.
    /// - Complexity: amortised O(key length).
    mutating func match(_ key: String) -> Match? {
        if let cached = cache[key] { return cached }
        let normalised = FieldRole.normalise(key)
        var found: Match?
        for role in FieldRole.allCases {
            if let rank = role.aliases.firstIndex(of: normalised) { found = Match(role: role, rank: rank); break }
        }
        if cache.count < capacity { cache[key] = .some(found) }
        return found
    }
}
