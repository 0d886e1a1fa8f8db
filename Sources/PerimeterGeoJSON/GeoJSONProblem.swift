/// Something wrong (error) or doubtful (warning) that ``GeoJSONReader`` found, and exactly where.
public struct GeoJSONProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// How bad a problem is.
    public enum Severity: String, Hashable, Sendable {
        /// The object it concerns was not loaded (a feature is skipped; a syntax error stops the read).
        case error
        /// The object was loaded as written.
        case warning
    }

    /// How bad it is.
    public var severity: Severity
    /// What is wrong, in words.
    public var message: String
    /// Where, as a JSON path (e.g. `$.features[12].geometry.coordinates[0][3][1]`).
    public var path: JSONPath
    /// The 0-based index in `features` of the feature concerned, when inside a feature collection.
    public var featureIndex: Int?
    /// The id of the feature concerned, when it has one.
    public var featureID: GeoJSON.FeatureID?
    /// The byte offset in the input.
    public var offset: Int
    /// The 1-based line.
    public var line: Int
    /// The 1-based column, counted in Unicode scalars from the start of the line.
    public var column: Int

    /// Creates a problem.
    public init(severity: Severity, message: String, path: JSONPath, featureIndex: Int? = nil,
                featureID: GeoJSON.FeatureID? = nil, offset: Int, line: Int, column: Int) {
        self.severity = severity
        self.message = message
        self.path = path
        self.featureIndex = featureIndex
        self.featureID = featureID
        self.offset = offset
        self.line = line
        self.column = column
    }

    /// `line:column: severity: message (at path, feature n "id")`.
    public var description: String {
        var text = "\(line):\(column): \(severity.rawValue): \(message) (at \(path)"
        if let featureIndex { text += ", feature \(featureIndex)" }
        if let featureID {
            if case .string(let id) = featureID { text += " id \"\(id)\"" } else { text += " id \(featureID)" }
        }
        return text + ")"
    }
}

/// What ``GeoJSONReader/read(_:)`` returns: the object (without the features that had errors) and every problem.
public struct GeoJSONReadResult: Sendable {
    /// The object, or `nil` when the input is not JSON, not GeoJSON, or its top-level geometry has errors.
    public var object: GeoJSON.Object?
    /// Every problem found, in input order.
    public var problems: [GeoJSONProblem]
    /// For a FeatureCollection: the position in the input of each feature kept in `object` (features with
    /// errors are left out, so these may skip numbers). Empty for other objects.
    public var featureIndices: [Int]
    /// For a FeatureCollection: where in the input each feature kept in `object` is written, as byte
    /// offsets from its `{` to just past its `}`. Those bytes, read alone, give the same feature, so a
    /// store can keep them as they came instead of writing the feature anew. Empty for other objects.
    public var featureByteRanges: [Range<Int>]

    /// Creates a result.
    public init(object: GeoJSON.Object?, problems: [GeoJSONProblem], featureIndices: [Int] = [],
                featureByteRanges: [Range<Int>] = []) {
        self.object = object
        self.problems = problems
        self.featureIndices = featureIndices
        self.featureByteRanges = featureByteRanges
    }

    /// The problems of severity `.error`.
    public var errors: [GeoJSONProblem] { problems.filter { $0.severity == .error } }

    /// The problems of severity `.warning`.
    public var warnings: [GeoJSONProblem] { problems.filter { $0.severity == .warning } }

    /// Whether any problem is an error.
    public var hasErrors: Bool { problems.contains { $0.severity == .error } }
}
