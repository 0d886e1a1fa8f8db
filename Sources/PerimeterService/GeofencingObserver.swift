import PerimeterEngine

/// Receives what a ``GeofencingService`` reports, with the labels of Mapbox's `GeofencingObserver`:
/// a class written for Mapbox's iOS SDK conforms unchanged.
///
/// Every method is a requirement, without a default, so that a misspelt method (`onEntry(_:)` for
/// `onEntry(event:)`) is a compile error rather than a method that is never called. Calls come on the
/// thread that made the service call, after the service's lock is released and (with
/// ``GeofencingOptions/Durability/everyCall``) after the events were committed; calls for one service
/// call come in event order. Keep them short.
///
/// A plain observer hears entry, dwell and exit events, errors and service-wide consent changes.
/// Perimeter's other events (passing through a fence between two updates, level `inside` events) and
/// per-device consent changes go only to an ``ExtendedGeofencingObserver``.
public protocol GeofencingObserver: AnyObject, Sendable {
    /// A device entered a fence.
    func onEntry(event: GeofencingEvent)
    /// A device stayed inside a fence for its dwell time.
    func onDwell(event: GeofencingEvent)
    /// A device left a fence (``GeofenceEvent/reason`` says whether it timed out).
    func onExit(event: GeofencingEvent)
    /// Something failed: an update was rejected, or the store failed.
    func onError(error: GeofencingError)
    /// Service-wide consent changed (``GeofencingService/setUserConsent(_:for:)`` without a device).
    func onUserConsentChanged(isConsentGiven: Bool)
}

/// A ``GeofencingObserver`` that also hears what Mapbox's observer has no method for: cross and
/// inside events and per-device consent changes. Its methods are requirements too, so a misspelt one
/// does not compile.
public protocol ExtendedGeofencingObserver: GeofencingObserver {
    /// A device passed through a fence between two updates (the `crossings` option).
    func onCross(event: GeofencingEvent)
    /// A device reported again while inside a fence (the `inside` initial trigger's level events).
    func onInside(event: GeofencingEvent)
    /// Consent changed for one device (service-wide changes come to
    /// ``GeofencingObserver/onUserConsentChanged(isConsentGiven:)``).
    func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool)
}
