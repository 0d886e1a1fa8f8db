import PerimeterEngine

/// Receives what a ``GeofencingService`` reports, like Mapbox's `GeofencingObserver`.
///
/// Every method has an empty default, so implement only what you need. Calls come on the thread that
/// made the service call, after the service's lock is released and (with ``GeofencingOptions/Durability/everyCall``)
/// after the events were committed; calls for one service call come in event order. Keep them short.
public protocol GeofencingObserver: AnyObject, Sendable {
    /// A device entered a fence.
    func onEntry(_ event: GeofencingEvent)
    /// A device stayed inside a fence for its dwell time.
    func onDwell(_ event: GeofencingEvent)
    /// A device left a fence (``GeofenceEvent/reason`` says whether it timed out).
    func onExit(_ event: GeofencingEvent)
    /// A device passed through a fence between two updates (the `crossings` option).
    func onCross(_ event: GeofencingEvent)
    /// A device reported again while inside a fence (the `inside` initial trigger's level events).
    func onInside(_ event: GeofencingEvent)
    /// Something failed: an update was rejected, or the store failed.
    func onError(_ error: GeofencingError)
    /// Consent changed: for `device`, or service-wide when `device` is `nil`.
    func onUserConsentChanged(device: DeviceID?, isConsentGiven: Bool)
}

extension GeofencingObserver {
    /// Does nothing.
    public func onEntry(_ event: GeofencingEvent) {}
    /// Does nothing.
    public func onDwell(_ event: GeofencingEvent) {}
    /// Does nothing.
    public func onExit(_ event: GeofencingEvent) {}
    /// Does nothing.
    public func onCross(_ event: GeofencingEvent) {}
    /// Does nothing.
    public func onInside(_ event: GeofencingEvent) {}
    /// Does nothing.
    public func onError(_ error: GeofencingError) {}
    /// Does nothing.
    public func onUserConsentChanged(device: DeviceID?, isConsentGiven: Bool) {}
}
