import PerimeterGeoJSON

/// Something wrong with a fence definition: where it is and what is wrong.
///
/// Errors mean the fence was not loaded; warnings mean it was loaded as documented (for example a
/// self-intersecting polygon, used with the even-odd rule). With `strict` loading every warning is an error.
public struct FenceProblem: Error, Hashable, Sendable, CustomStringConvertible {
    /// How serious a problem is.
    public enum Severity: String, Hashable, Sendable {
        /// The fence (or the whole input) could not be used.
        case error
        /// The fence was used as documented, but the input is suspicious.
        case warning
    }

    /// How serious the problem is.
    public var severity: Severity
    /// The position of the feature in the input (0-based), if the problem belongs to one.
    public var featureIndex: Int?
    /// The feature's id, if it has one.
    public var featureID: String?
    /// Where in the JSON document, e.g. `$.features[3].properties.perimeter:dwell`.
    public var path: JSONPath
    /// What is wrong, for a person.
    public var message: String

    /// Creates a problem.
    public init(_ severity: Severity, featureIndex: Int?, featureID: String?, path: JSONPath, message: String) {
        self.severity = severity
        self.featureIndex = featureIndex
        self.featureID = featureID
        self.path = path
        self.message = message
    }

    /// `error: feature 3 (id "lake") at $.features[3].geometry: Point fence needs a radius …`
    public var description: String {
        var text = severity.rawValue + ": "
        if let featureIndex {
            text += "feature \(featureIndex)"
            if let featureID { text += " (id \"\(featureID)\")" }
            text += " "
        }
        text += "at \(path): \(message)"
        return text
    }
}
