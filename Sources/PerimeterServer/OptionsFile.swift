import PerimeterFences
import PerimeterGeoJSON
import PerimeterService

/// The engine-wide options file of `perimeter serve --config FILE` (docs/server.md, "Options file"):
/// a JSON object whose members set ``GeofencingOptions`` fields by name. Members left out keep their
/// value; `null` clears an optional one.
///
/// ```json
/// {"defaultDwellTime": 300, "defaultRadius": 150, "maximumMonitoredFeatures": 50000,
///  "timeModel": "live", "allowedLateness": 5, "maximumFutureSkew": 60,
///  "detectionOptions": {"perimeter:hysteresis": 15, "perimeter:crossings": true}}
/// ```
///
/// `detectionOptions` takes the same `perimeter:` keys as a fence's properties (docs/fences.md); a
/// fence's own keys still win, field by field. Durability is the server's (`--commit-interval`).
public enum OptionsFile {
    /// A problem with the file: the member (a JSONPath such as `$.detectionOptions["perimeter:hysteresis"]`,
    /// or `$` for the whole document) and what is wrong with it.
    public struct Problem: Error, Hashable, Sendable, CustomStringConvertible {
        /// Where: `$` for the document, `$.key` for a member.
        public var path: String
        /// What is wrong and what would be right.
        public var message: String
        /// `$.allowedLateness: must be a number ≥ 0 (seconds), not "soon"`.
        public var description: String { "\(path): \(message)" }
    }

    /// The members the file may have.
    public static let keys = [
        "maximumMonitoredFeatures", "defaultDwellTime", "defaultRadius", "maximumHorizontalAccuracy", "timeModel",
        "allowedLateness", "maximumFutureSkew", "consentByDefault", "reorderWindow", "deduplicate", "detectionOptions",
    ]

    /// `base` with the members of the JSON document `bytes` applied.
    /// - Throws: the first ``Problem``: not JSON, not an object, an unknown member, a value of the wrong
    ///   type or range.
    public static func options(from bytes: [UInt8], base: GeofencingOptions = GeofencingOptions()) throws(Problem) -> GeofencingOptions {
        let document: JSONValue
        do {
            document = try JSONParser().parse(bytes)
        } catch {
            throw Problem(path: "$", message: "not valid JSON: \(error)")
        }
        guard let members = document.objectValue else {
            throw Problem(path: "$", message: "must be a JSON object of options like {\"defaultDwellTime\": 300}, not \(document.text)")
        }
        var options = base
        for key in members.keys.sorted() {
            let value = members[key]!
            let path = "$.\(key)"
            func number(_ minimum: Double, exclusive: Bool = false, unit: String) throws(Problem) -> Double {
                guard let n = value.doubleValue, n.isFinite, exclusive ? n > minimum : n >= minimum else {
                    throw Problem(path: path, message: "must be a number \(exclusive ? ">" : "≥") \(minimum == minimum.rounded() ? String(Int(minimum)) : String(minimum)) (\(unit)), not \(value.text)")
                }
                return n
            }
            func optionalNumber(_ minimum: Double, exclusive: Bool = false, unit: String) throws(Problem) -> Double? {
                value.isNull ? nil : try number(minimum, exclusive: exclusive, unit: unit)
            }
            func flag() throws(Problem) -> Bool {
                guard case .bool(let b) = value else { throw Problem(path: path, message: "must be true or false, not \(value.text)") }
                return b
            }
            switch key {
            case "maximumMonitoredFeatures":
                let n = try number(0, unit: "features")
                guard n == n.rounded(), n <= Double(Int32.max) else {
                    throw Problem(path: path, message: "must be a whole number of features, not \(value.text)")
                }
                options.maximumMonitoredFeatures = Int(n)
            case "defaultDwellTime": options.defaultDwellTime = try optionalNumber(0, unit: "seconds, or null for none")
            case "defaultRadius": options.defaultRadius = try optionalNumber(0, exclusive: true, unit: "metres, or null")
            case "maximumHorizontalAccuracy": options.maximumHorizontalAccuracy = try optionalNumber(0, unit: "metres, or null")
            case "timeModel":
                switch value.stringValue {
                case "live": options.timeModel = .live
                case "data": options.timeModel = .data
                default: throw Problem(path: path, message: "must be \"live\" or \"data\", not \(value.text)")
                }
            case "allowedLateness": options.allowedLateness = try number(0, unit: "seconds")
            case "maximumFutureSkew": options.maximumFutureSkew = try number(0, unit: "seconds")
            case "consentByDefault": options.consentByDefault = try flag()
            case "reorderWindow": options.reorderWindow = try number(0, unit: "seconds; 0 is off")
            case "deduplicate": options.deduplicate = try flag()
            case "detectionOptions": options.detectionOptions = try detectionOptions(value, path: path)
            default:
                throw Problem(path: path, message: "is not an option; the file may set \(keys.joined(separator: ", "))")
            }
        }
        return options
    }

    /// The `perimeter:` option keys a fence's properties may carry (``DetectionOptions/read(from:)``).
    static let detectionKeys: Set<String> = [
        FenceProperties.accuracy, FenceProperties.hysteresis, FenceProperties.maximumAccuracy, FenceProperties.entryDelay,
        FenceProperties.exitDelay, FenceProperties.crossings, FenceProperties.interpolate, FenceProperties.maximumGap,
        FenceProperties.initialTrigger, FenceProperties.dwellEvery, FenceProperties.staleAfter,
        FenceProperties.exitOnStale, FenceProperties.schedule,
    ]

    private static func detectionOptions(_ value: JSONValue, path: String) throws(Problem) -> DetectionOptions {
        guard let members = value.objectValue else {
            throw Problem(path: path, message: "must be an object of perimeter: option keys like {\"perimeter:hysteresis\": 15}, not \(value.text)")
        }
        if let unknown = members.keys.sorted().first(where: { !detectionKeys.contains($0) }) {
            throw Problem(path: "\(path)[\"\(unknown)\"]",
                          message: "is not a detection option; use the fence property keys of docs/fences.md: \(detectionKeys.sorted().joined(separator: ", "))")
        }
        let (options, problems) = DetectionOptions.read(from: members)
        if let problem = problems.first {
            throw Problem(path: "\(path)[\"\(problem.key)\"]", message: problem.message)
        }
        return options
    }
}

extension JSONValue {
    /// The value as JSON, shortened for an error message.
    fileprivate var text: String {
        let json = JSONWriter().string(self)
        return json.count > 40 ? json.prefix(37) + "…" : json
    }
}
