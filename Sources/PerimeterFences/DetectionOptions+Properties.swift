import Foundation
import PerimeterGeoJSON

extension FenceProperties {
    /// `"ignore"` or `"conservative"`: how a fix's horizontal accuracy is used.
    public static let accuracy = "perimeter:accuracy"
    /// Metres of hysteresis for fixes without accuracy (a number ≥ 0).
    public static let hysteresis = "perimeter:hysteresis"
    /// Fixes with a worse accuracy (metres, > 0) are ignored for transitions.
    public static let maximumAccuracy = "perimeter:max-accuracy"
    /// Seconds an entry must hold before it is confirmed (≥ 0).
    public static let entryDelay = "perimeter:entry-delay"
    /// Seconds an exit must hold before it is confirmed (≥ 0).
    public static let exitDelay = "perimeter:exit-delay"
    /// `true` to report `cross` events between sparse fixes.
    public static let crossings = "perimeter:crossings"
    /// `true` to interpolate entry and exit times between fixes.
    public static let interpolate = "perimeter:interpolate"
    /// Longest gap in seconds (> 0) bridged by crossings and interpolation.
    public static let maximumGap = "perimeter:max-gap"
    /// `"entry"`, `"none"` or `"inside"`: what a device already inside gets first.
    public static let initialTrigger = "perimeter:initial"
    /// Seconds (> 0) between repeated dwells while inside.
    public static let dwellEvery = "perimeter:dwell-every"
    /// Seconds of silence (> 0) after which a device is stale.
    public static let staleAfter = "perimeter:stale-after"
    /// `true` to emit an exit with reason `timeout` when a device goes stale.
    public static let exitOnStale = "perimeter:stale-exit"
    /// Weekly active windows with an explicit UTC offset, e.g. `"Mon-Fri 08:00-18:00 UTC+01:00"`.
    public static let schedule = "perimeter:schedule"
}

extension DetectionOptions {
    /// One problem found while reading option properties: the key and what is wrong.
    public struct PropertyProblem: Hashable, Sendable {
        /// The property key.
        public var key: String
        /// What is wrong with its value.
        public var message: String
    }

    /// Reads the `perimeter:` option keys (docs/fences.md) from a feature's properties.
    ///
    /// - Returns: the options set (unset keys stay `nil`) and one problem per malformed value
    ///   (that option is then left unset).
    public static func read(from properties: [String: JSONValue]) -> (options: DetectionOptions, problems: [PropertyProblem]) {
        var options = DetectionOptions()
        var problems: [PropertyProblem] = []

        func value(_ key: String) -> JSONValue? {
            guard let value = properties[key], !value.isNull else { return nil }
            return value
        }
        func number(_ key: String, positive: Bool) -> Double? {
            guard let v = value(key) else { return nil }
            let n = v.doubleValue ?? v.stringValue.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
            guard let n, n.isFinite, positive ? n > 0 : n >= 0 else {
                problems.append(PropertyProblem(key: key, message: "\(key) must be a \(positive ? "positive" : "non-negative") number, not \(describe(v))"))
                return nil
            }
            return n
        }
        func flag(_ key: String) -> Bool? {
            guard let v = value(key) else { return nil }
            if case .bool(let b) = v { return b }
            if let text = v.stringValue?.lowercased(), text == "true" || text == "false" { return text == "true" }
            problems.append(PropertyProblem(key: key, message: "\(key) must be true or false, not \(describe(v))"))
            return nil
        }
        func choice<T: RawRepresentable & CaseIterable>(_ key: String, _ type: T.Type) -> T? where T.RawValue == String {
            guard let v = value(key) else { return nil }
            if let text = v.stringValue, let result = T(rawValue: text.lowercased()) { return result }
            let names = T.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            problems.append(PropertyProblem(key: key, message: "\(key) must be one of \(names), not \(describe(v))"))
            return nil
        }

        options.accuracy = choice(FenceProperties.accuracy, AccuracyMode.self)
        options.hysteresis = number(FenceProperties.hysteresis, positive: false)
        options.maximumAccuracy = number(FenceProperties.maximumAccuracy, positive: true)
        options.entryDelay = number(FenceProperties.entryDelay, positive: false)
        options.exitDelay = number(FenceProperties.exitDelay, positive: false)
        options.crossings = flag(FenceProperties.crossings)
        options.interpolate = flag(FenceProperties.interpolate)
        options.maximumGap = number(FenceProperties.maximumGap, positive: true)
        options.initialTrigger = choice(FenceProperties.initialTrigger, InitialTrigger.self)
        options.dwellEvery = number(FenceProperties.dwellEvery, positive: true)
        options.staleAfter = number(FenceProperties.staleAfter, positive: true)
        options.exitOnStale = flag(FenceProperties.exitOnStale)
        if let v = value(FenceProperties.schedule) {
            if let text = v.stringValue {
                switch FenceSchedule.parse(text) {
                case .success(let schedule): options.schedule = schedule
                case .failure(let error):
                    problems.append(PropertyProblem(key: FenceProperties.schedule,
                                                    message: "\(FenceProperties.schedule) is not a valid schedule: \(error)"))
                }
            } else {
                problems.append(PropertyProblem(key: FenceProperties.schedule,
                                                message: "\(FenceProperties.schedule) must be a string such as \"Mon-Fri 08:00-18:00 UTC+01:00\", not \(describe(v))"))
            }
        }
        return (options, problems)
    }

    private static func describe(_ value: JSONValue) -> String { value.summary }
}
