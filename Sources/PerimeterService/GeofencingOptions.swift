import PerimeterEngine
import PerimeterFences

/// Settings of a ``GeofencingService``, given to ``GeofencingService/configure(_:)``.
public struct GeofencingOptions: Hashable, Sendable {
    /// When the store commits what the service did (see docs/service.md, "Durability").
    public enum Durability: Hashable, Sendable {
        /// Every call that changes state commits before it returns: when `process` returns, its updates,
        /// the state they produced and their events are in the store. Calls made at the same time from
        /// several threads share commits: a `process` call whose changes were written by another call's
        /// commit returns without a commit of its own (each still returns only once its changes are
        /// stored), so concurrent callers pay for fewer transactions than calls.
        case everyCall
        /// Group commit: changes accumulate in memory and are committed once at least this many updates
        /// are pending (and by ``GeofencingService/flush()``, feature and consent changes, and `close`).
        /// A crash loses at most the uncommitted tail; ``GeofencingService/processedUpdateCount`` after a
        /// restart says where to resume.
        case everyUpdates(Int)
    }

    /// The most features (fences) the service monitors; adding past it fails with
    /// ``GeofencingError/Code/limitExceeded``. Default 100,000, like Mapbox.
    public var maximumMonitoredFeatures: Int
    /// Dwell time in seconds for fences that set none; `nil` for no dwell on such fences.
    public var defaultDwellTime: Double?
    /// Radius in metres for Point, MultiPoint and line features that set none (neither
    /// `perimeter:radius` nor `MBX_GEOFENCE_POINT_RADIUS`); `nil` makes such a feature invalid.
    /// Default 300, the radius Mapbox documents for Point features.
    public var defaultRadius: Double?
    /// Updates reporting a horizontal accuracy worse (larger) than this many metres are rejected with
    /// ``GeofencingError/Code/inaccurateLocation``; `nil` accepts any accuracy.
    public var maximumHorizontalAccuracy: Double?
    /// How time moves for the service's timers (docs/semantics.md, "Time in the live service").
    public enum TimeModel: Hashable, Sendable {
        /// The service's own clock (``GeofencingClock``) fires every timer — dwell, debounce confirmations,
        /// staleness exits, reorder releases, schedules, expiry — once it reads later than the timer's due
        /// time plus ``GeofencingOptions/allowedLateness``, for each device that has been quiet that long.
        /// A device's updates move only its own time; one dated more than
        /// ``GeofencingOptions/maximumFutureSkew`` ahead of the clock is refused. The default.
        case live
        /// The data clock, as in a replay: each update first fires every device's timers due by its time,
        /// and the service's clock is never read. Deterministic; for replays, studies and tests.
        case data
    }

    /// How time moves for the service's timers; ``TimeModel/live`` by default.
    public var timeModel: TimeModel
    /// With ``TimeModel/live``: seconds the service waits for late updates before it fires timers on its
    /// own — a timer due at *t* fires once the clock reads *t* + this, and only for a device that sent
    /// nothing for this long (so that a backlog uploaded in several requests is evaluated as one). Default 5.
    public var allowedLateness: Double
    /// With ``TimeModel/live``: an update dated more than this many seconds ahead of the service's clock
    /// is refused (``GeofencingError/Code/futureUpdate``) and changes nothing. Default 60.
    public var maximumFutureSkew: Double
    /// Whether a device that was never asked has consent (service-wide consent must also be given).
    public var consentByDefault: Bool
    /// When changes are committed to the store.
    public var durability: Durability
    /// Detection options for every feature (docs/semantics.md, "Options"); a feature's own `perimeter:`
    /// option properties win, field by field. All off by default.
    public var detectionOptions: DetectionOptions
    /// Seconds each device's updates wait so that late ones are processed in time order; 0: off.
    public var reorderWindow: Double
    /// Whether an update identical to one of the device's recent updates (same time and position) is
    /// absorbed without effect, making re-uploads idempotent.
    public var deduplicate: Bool
    /// Engine shards: devices are split among this many engines that process a batch's updates in
    /// parallel, each on a thread of its own (``ShardedEngine``; docs/service.md, "Shards"). Events are
    /// the same for any count. 1 (the default): one engine.
    public var shards: Int

    /// Creates options.
    public init(maximumMonitoredFeatures: Int = 100_000, defaultDwellTime: Double? = nil,
                defaultRadius: Double? = FenceLoader.Options.mapboxDefaultRadius,
                maximumHorizontalAccuracy: Double? = nil, timeModel: TimeModel = .live,
                allowedLateness: Double = 5, maximumFutureSkew: Double = 60,
                consentByDefault: Bool = true, durability: Durability = .everyCall,
                detectionOptions: DetectionOptions = DetectionOptions(), reorderWindow: Double = 0,
                deduplicate: Bool = false, shards: Int = 1) {
        self.maximumMonitoredFeatures = maximumMonitoredFeatures
        self.defaultDwellTime = defaultDwellTime
        self.defaultRadius = defaultRadius
        self.maximumHorizontalAccuracy = maximumHorizontalAccuracy
        self.timeModel = timeModel
        self.allowedLateness = allowedLateness
        self.maximumFutureSkew = maximumFutureSkew
        self.consentByDefault = consentByDefault
        self.durability = durability
        self.detectionOptions = detectionOptions
        self.reorderWindow = reorderWindow
        self.deduplicate = deduplicate
        self.shards = shards
    }

    /// The engine configuration these options describe.
    var engineConfiguration: DetectionEngine.Configuration {
        DetectionEngine.Configuration(defaultDwellTime: defaultDwellTime, options: detectionOptions,
                                      reorderWindow: reorderWindow, deduplicate: deduplicate)
    }

    /// The first problem with these options, if any.
    func validate() -> GeofencingError? {
        if maximumMonitoredFeatures < 0 {
            return GeofencingError(.invalidArgument, "maximumMonitoredFeatures is \(maximumMonitoredFeatures); it must be 0 or more")
        }
        if let d = defaultDwellTime, !(d.isFinite && d >= 0) {
            return GeofencingError(.invalidArgument, "defaultDwellTime is \(d); it must be a finite number of seconds ≥ 0, or nil")
        }
        if let r = defaultRadius, !(r.isFinite && r > 0) {
            return GeofencingError(.invalidArgument, "defaultRadius is \(r); it must be a finite number of metres > 0, or nil")
        }
        if let a = maximumHorizontalAccuracy, !(a >= 0) {
            return GeofencingError(.invalidArgument, "maximumHorizontalAccuracy is \(a); it must be a number of metres ≥ 0, or nil")
        }
        if case .everyUpdates(let n) = durability, n < 1 {
            return GeofencingError(.invalidArgument, "durability .everyUpdates(\(n)) needs a count of at least 1")
        }
        if !(allowedLateness.isFinite && allowedLateness >= 0) {
            return GeofencingError(.invalidArgument, "allowedLateness is \(allowedLateness); it must be a finite number of seconds ≥ 0")
        }
        if !(maximumFutureSkew.isFinite && maximumFutureSkew >= 0) {
            return GeofencingError(.invalidArgument, "maximumFutureSkew is \(maximumFutureSkew); it must be a finite number of seconds ≥ 0")
        }
        if !(1...1024).contains(shards) {
            return GeofencingError(.invalidArgument, "shards is \(shards); it must be from 1 to 1024")
        }
        if !(reorderWindow.isFinite && reorderWindow >= 0) {
            return GeofencingError(.invalidArgument, "reorderWindow is \(reorderWindow); it must be a finite number of seconds ≥ 0 (0: off)")
        }
        let o = detectionOptions
        let seconds: [(String, Double?)] = [
            ("hysteresis", o.hysteresis), ("maximumAccuracy", o.maximumAccuracy), ("entryDelay", o.entryDelay),
            ("exitDelay", o.exitDelay), ("maximumGap", o.maximumGap), ("dwellEvery", o.dwellEvery), ("staleAfter", o.staleAfter),
        ]
        for (name, value) in seconds {
            if let value, !(value.isFinite && value >= 0) {
                return GeofencingError(.invalidArgument, "detectionOptions.\(name) is \(value); it must be a finite number ≥ 0, or nil")
            }
        }
        return nil
    }
}
