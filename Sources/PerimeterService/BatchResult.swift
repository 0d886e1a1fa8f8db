/// What ``GeofencingService/process(_:)-(Array)`` produced for a batch.
public struct BatchResult: Sendable {
    /// An update that was not accepted.
    public struct Rejection: Sendable {
        /// Its position in the batch.
        public var index: Int
        /// Why (``GeofencingError/Code/outOfOrderUpdate``, ``GeofencingError/Code/invalidLocation`` or
        /// ``GeofencingError/Code/inaccurateLocation``).
        public var error: GeofencingError

        /// Creates a rejection.
        public init(index: Int, error: GeofencingError) {
            self.index = index
            self.error = error
        }
    }

    /// The events, in log order.
    public var events: [GeofencingEvent] = []
    /// The updates that were not accepted, in batch order.
    public var rejections: [Rejection] = []

    /// An empty result.
    public init() {}
}
