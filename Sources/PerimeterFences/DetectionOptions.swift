/// Detection-quality options (docs/semantics.md, "Options"): all off by default.
///
/// The same type serves two levels. On a ``Fence`` every field is optional and `nil` means "as the
/// engine is configured"; in the engine's configuration `nil` means "off". A fence's value wins over
/// the engine's. Device-stream options (reorder window, duplicate suppression) are engine-wide only and
/// live in the engine's configuration.
public struct DetectionOptions: Hashable, Sendable {
    /// How an update's horizontal accuracy is used.
    public enum AccuracyMode: String, Hashable, Sendable, CaseIterable {
        /// The fix is taken as a point (default).
        case ignore
        /// Enter only when the accuracy disc lies inside the fence, exit only when it lies wholly
        /// outside; otherwise keep the current presence.
        case conservative
    }

    /// What a device's first evaluation against a fence reports when it is already inside.
    public enum InitialTrigger: String, Hashable, Sendable, CaseIterable {
        /// An `entry` event (default: unknown counts as outside).
        case entry
        /// Nothing: presence is set silently (dwell still counts from that update).
        case none
        /// Level events: an `inside` event instead of the entry, and one on every later update that
        /// finds the device still inside (Tile38's `inside` detection).
        case inside
    }

    /// Accuracy handling; `nil`: ``AccuracyMode/ignore``.
    public var accuracy: AccuracyMode?
    /// A fixed uncertainty radius in metres used like an accuracy disc for updates that carry no
    /// accuracy (or all updates when accuracy is ignored); `nil` or 0: none.
    public var hysteresis: Double?
    /// Updates whose accuracy (metres) is worse than this are ignored for transitions (they still
    /// count as accepted and move the clock); `nil`: no limit.
    public var maximumAccuracy: Double?
    /// Seconds a device must be seen inside before the entry is confirmed; `nil` or 0: immediate.
    public var entryDelay: Double?
    /// Seconds a device must be seen outside before the exit is confirmed; `nil` or 0: immediate.
    public var exitDelay: Double?
    /// Whether a straight segment between two outside updates that passes through the fence emits a
    /// `cross` event; `nil`: no.
    public var crossings: Bool?
    /// Whether entry and exit times are estimated on the segment between the last update on one side
    /// and the first on the other; `nil`: no.
    public var interpolate: Bool?
    /// The longest gap in seconds between two updates that crossings and interpolation bridge;
    /// `nil`: ``defaultMaximumGap``.
    public var maximumGap: Double?
    /// What the first evaluation of an inside device reports; `nil`: ``InitialTrigger/entry``.
    public var initialTrigger: InitialTrigger?
    /// Repeat the dwell every this many seconds while the device stays inside; `nil` or 0: once per visit.
    public var dwellEvery: Double?
    /// Seconds of silence after which a device is no longer assumed to be where it last was; `nil`: never.
    public var staleAfter: Double?
    /// Whether a stale device gets an `exit` with reason `timeout`; `nil`: no (dwells just stop).
    public var exitOnStale: Bool?
    /// Weekly windows in which the fence is active; `nil`: always.
    public var schedule: FenceSchedule?

    /// The gap crossings and interpolation bridge when ``maximumGap`` is not set: 300 s.
    public static let defaultMaximumGap: Double = 300

    /// Creates options; every argument defaults to "not set".
    public init(accuracy: AccuracyMode? = nil, hysteresis: Double? = nil, maximumAccuracy: Double? = nil,
                entryDelay: Double? = nil, exitDelay: Double? = nil, crossings: Bool? = nil,
                interpolate: Bool? = nil, maximumGap: Double? = nil, initialTrigger: InitialTrigger? = nil,
                dwellEvery: Double? = nil, staleAfter: Double? = nil, exitOnStale: Bool? = nil,
                schedule: FenceSchedule? = nil) {
        self.accuracy = accuracy
        self.hysteresis = hysteresis
        self.maximumAccuracy = maximumAccuracy
        self.entryDelay = entryDelay
        self.exitDelay = exitDelay
        self.crossings = crossings
        self.interpolate = interpolate
        self.maximumGap = maximumGap
        self.initialTrigger = initialTrigger
        self.dwellEvery = dwellEvery
        self.staleAfter = staleAfter
        self.exitOnStale = exitOnStale
        self.schedule = schedule
    }

    /// Whether every option is unset or set to its "off" value, so detection follows the default
    /// semantics exactly. (``maximumGap`` alone changes nothing.)
    public var isOff: Bool {
        (accuracy ?? .ignore) == .ignore && (hysteresis ?? 0) == 0 && maximumAccuracy == nil
            && (entryDelay ?? 0) == 0 && (exitDelay ?? 0) == 0 && !(crossings ?? false)
            && !(interpolate ?? false) && (initialTrigger ?? .entry) == .entry && (dwellEvery ?? 0) == 0
            && staleAfter == nil && schedule == nil
    }

    /// These options with every unset field taken from `fallback`.
    public func merged(over fallback: DetectionOptions) -> DetectionOptions {
        DetectionOptions(accuracy: accuracy ?? fallback.accuracy, hysteresis: hysteresis ?? fallback.hysteresis,
                         maximumAccuracy: maximumAccuracy ?? fallback.maximumAccuracy,
                         entryDelay: entryDelay ?? fallback.entryDelay, exitDelay: exitDelay ?? fallback.exitDelay,
                         crossings: crossings ?? fallback.crossings, interpolate: interpolate ?? fallback.interpolate,
                         maximumGap: maximumGap ?? fallback.maximumGap,
                         initialTrigger: initialTrigger ?? fallback.initialTrigger,
                         dwellEvery: dwellEvery ?? fallback.dwellEvery, staleAfter: staleAfter ?? fallback.staleAfter,
                         exitOnStale: exitOnStale ?? fallback.exitOnStale, schedule: schedule ?? fallback.schedule)
    }
}
