import PerimeterEngine

/// What a reader produced: the updates in file order and the problems it skipped over.
public struct TrackReadResult: Hashable, Sendable {
    /// Location updates in the order they appear in the input (not sorted by time).
    public var updates: [LocationUpdate]
    /// Per-record problems: each names the record that was skipped or the field that was ignored.
    public var warnings: [TrackProblem]

    /// Creates a result.
    public init(updates: [LocationUpdate] = [], warnings: [TrackProblem] = []) {
        self.updates = updates
        self.warnings = warnings
    }
}
