import PerimeterEngine
import PerimeterFences

/// The detection-option flags shared by `perimeter replay` and `perimeter study` (docs/semantics.md,
/// "Options"); each sets the engine-wide value, which fences' own `perimeter:` keys override.
struct DetectionFlags {
    static let help = """
      --accuracy MODE      ignore (default) or conservative: enter/exit only when the fix's accuracy
                           disc is wholly inside/outside.
      --hysteresis METRES  Uncertainty band for fixes without accuracy.
      --max-accuracy M     Ignore fixes with a worse accuracy for transitions.
      --entry-delay S      Confirm an entry only after it held S seconds (event keeps the first time).
      --exit-delay S       Confirm an exit only after it held S seconds.
      --crossings          Report 'cross' events for fences passed between two outside fixes.
      --interpolate        Estimate entry/exit times between the fixes either side of the boundary.
      --max-gap S          Longest gap bridged by crossings and interpolation (default 300).
      --initial TRIGGER    entry (default), none, or inside (level events while inside).
      --dwell-every S      Repeat the dwell every S seconds while inside.
      --stale-after S      A device silent for S seconds is no longer assumed inside (no more dwells).
      --stale-exit         With --stale-after: emit an exit with reason timeout.
      --reorder-window S   Buffer each device's updates S seconds and process them in time order.
      --deduplicate        Absorb updates identical to a recent one (same device, time, position).
    """

    var options = DetectionOptions()
    var reorderWindow = 0.0
    var deduplicate = false

    /// Every option off.
    init() {}

    /// Removes the option flags from `args`.
    init(_ args: inout Arguments) throws {
        let day = 31_536_000.0
        options.accuracy = try args.choice("accuracy", DetectionOptions.AccuracyMode.allCases.map(\.rawValue))
            .flatMap(DetectionOptions.AccuracyMode.init)
        options.hysteresis = try args.number("hysteresis", in: 0...100_000)
        options.maximumAccuracy = try args.number("max-accuracy", in: 0.001...100_000)
        options.entryDelay = try args.number("entry-delay", in: 0...day)
        options.exitDelay = try args.number("exit-delay", in: 0...day)
        options.crossings = args.flag("crossings") ? true : nil
        options.interpolate = args.flag("interpolate") ? true : nil
        options.maximumGap = try args.number("max-gap", in: 0.001...day)
        options.initialTrigger = try args.choice("initial", DetectionOptions.InitialTrigger.allCases.map(\.rawValue))
            .flatMap(DetectionOptions.InitialTrigger.init)
        options.dwellEvery = try args.number("dwell-every", in: 0.001...day)
        options.staleAfter = try args.number("stale-after", in: 0.001...day)
        options.exitOnStale = args.flag("stale-exit") ? true : nil
        reorderWindow = try args.number("reorder-window", in: 0...86_400) ?? 0
        deduplicate = args.flag("deduplicate")
        if options.exitOnStale == true, options.staleAfter == nil {
            throw CommandLineError.usage("--stale-exit needs --stale-after SECONDS")
        }
    }

    /// The engine configuration these flags describe.
    func configuration(defaultDwellTime: Double?) -> DetectionEngine.Configuration {
        DetectionEngine.Configuration(defaultDwellTime: defaultDwellTime, options: options,
                                      reorderWindow: reorderWindow, deduplicate: deduplicate)
    }
}
