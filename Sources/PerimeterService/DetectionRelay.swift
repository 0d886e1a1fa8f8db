import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON

/// Where a ``GeofencingService`` hands detection over when other processes run the engine — the
/// workers of a cluster (docs/cluster.md, "The API node").
///
/// A service created with a relay keeps the API's bookkeeping (fences, consent, the event log, its
/// observers and sink) but detects nothing itself: it checks each update as far as it can without the
/// device's state (consent, accuracy, a date too far ahead) and passes the rest to ``relay(_:completion:)``;
/// fence changes are validated, then stored through ``relayFences(upserted:removed:)``, which applies them
/// to the service's own copy in the order its store holds them (or leaves that to the service); consent changes likewise through ``relayConsent(_:for:)``, so that every
/// service sharing the relay's store refuses the same devices; and the events come back through
/// ``GeofencingService/logRelayedEvents(_:)``, which numbers them in the order they arrive.
public protocol DetectionRelay: Sendable {
    /// Hands accepted `updates` (in order) to the detecting processes and calls `completion` once they
    /// are stored there (`nil`), or with the error that kept them from being stored. Must not block the
    /// caller; `completion` may run on any thread and must not block either.
    func relay(_ updates: [LocationUpdate], completion: @escaping @Sendable (GeofencingError?) -> Void)

    /// Stores fence changes where the detecting processes read them: `upserted` features (each has an
    /// id) added or replaced, then the fences `removed`. Returns once they are stored.
    ///
    /// A relay whose store other services change too (several API nodes) should apply every stored
    /// change to the service itself, in the store's order (``GeofencingService/applyRelayedFences(upserted:removed:)``),
    /// and return only once its own are applied: were the service to apply its own change after storing
    /// it, another service's later change to the same fence, applied in between, would be undone here.
    /// - Returns: `true` when the changes are applied to the service already, in the store's order (the
    ///   service does not apply them again); `false` when the service is to apply them itself.
    @discardableResult
    func relayFences(upserted: [GeoJSON.Feature], removed: [FenceID]) throws(GeofencingError) -> Bool

    /// Stores a consent change where every service sharing this relay's store reads it: for `device`,
    /// or service-wide when `nil`. Returns once it is stored, with its position among the changes
    /// stored there (a later change of any consent has a larger one): the service applies it to its
    /// own copy with that position (``GeofencingService/applyRelayedConsent(_:for:position:)``), and so
    /// does whatever reads the changes back, so that the latest stored change wins whichever arrives
    /// last. `nil`: the relay does not share consent, and the change is the service's own.
    func relayConsent(_ isConsentGiven: Bool, for device: DeviceID?) throws(GeofencingError) -> UInt64?

    /// Gauges the server adds to `/metrics`, sampled now (name, help text, value).
    var gauges: [(name: String, help: String, value: Double)] { get }
}

extension DetectionRelay {
    /// Shares no consent: each service keeps its own (`nil`).
    public func relayConsent(_ isConsentGiven: Bool, for device: DeviceID?) throws(GeofencingError) -> UInt64? { nil }

    /// None.
    public var gauges: [(name: String, help: String, value: Double)] { [] }
}
