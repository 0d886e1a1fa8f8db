import PerimeterEngine

/// An event as recorded in the service's event log (the outbox): the event and its sequence number.
///
/// Sequence numbers start at 1 and increase by one per event, across restarts.
public struct GeofencingEvent: Hashable, Sendable {
    /// Position in the event log (1, 2, 3, …).
    public var sequence: Int64
    /// The event.
    public var event: GeofenceEvent

    /// Creates a logged event.
    public init(sequence: Int64, event: GeofenceEvent) {
        self.sequence = sequence
        self.event = event
    }
}
