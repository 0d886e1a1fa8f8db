import PerimeterFences

/// A fence's options with the engine's filled in and every "off" made concrete.
struct ResolvedOptions: Sendable {
    var conservative: Bool
    var hysteresis: Double
    var maximumAccuracy: Double
    var entryDelay: Double
    var exitDelay: Double
    var crossings: Bool
    var interpolate: Bool
    var maximumGap: Double
    var initialTrigger: DetectionOptions.InitialTrigger
    var dwellEvery: Double
    var staleAfter: Double?
    var exitOnStale: Bool
    var schedule: FenceSchedule?

    init(_ o: DetectionOptions) {
        conservative = o.accuracy == .conservative
        hysteresis = max(0, o.hysteresis ?? 0)
        maximumAccuracy = o.maximumAccuracy ?? .infinity
        entryDelay = max(0, o.entryDelay ?? 0)
        exitDelay = max(0, o.exitDelay ?? 0)
        crossings = o.crossings ?? false
        interpolate = o.interpolate ?? false
        maximumGap = o.maximumGap ?? DetectionOptions.defaultMaximumGap
        initialTrigger = o.initialTrigger ?? .entry
        dwellEvery = max(0, o.dwellEvery ?? 0)
        staleAfter = o.staleAfter
        exitOnStale = o.exitOnStale ?? false
        schedule = o.schedule
    }

    /// Whether a fix with this accuracy may change presence.
    func accepts(accuracy: Double?) -> Bool {
        guard let accuracy else { return true }
        return !(accuracy > maximumAccuracy)
    }

    /// The radius of uncertainty to apply to a fix: its accuracy in conservative mode, else the hysteresis.
    func uncertainty(accuracy: Double?) -> Double {
        if conservative, let accuracy, accuracy.isFinite, accuracy > 0 { return accuracy }
        return hysteresis
    }
}
