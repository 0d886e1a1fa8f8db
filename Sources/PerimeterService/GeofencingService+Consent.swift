import PerimeterEngine

extension GeofencingService {
    /// Records the user's consent to location processing: for `device`, or service-wide when `device`
    /// is `nil` (Mapbox's user consent). Without consent no update is processed or stored. Committed
    /// before it returns. When the value changes, observers hear
    /// ``GeofencingObserver/onUserConsentChanged(isConsentGiven:)`` (service-wide) or
    /// ``ExtendedGeofencingObserver/onUserConsentChanged(device:isConsentGiven:)`` (one device).
    ///
    /// Revoking consent keeps the state already stored for the device; remove the store's file (or
    /// use a new store) to erase it.
    public func setUserConsent(_ isConsentGiven: Bool, for device: DeviceID? = nil) throws(GeofencingError) {
        let (changed, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> (Bool, UInt64?) in
            let options = try c.configured()
            let changed: Bool
            if let device {
                changed = (c.deviceConsents[device] ?? options.consentByDefault) != isConsentGiven
                c.deviceConsents[device] = isConsentGiven
                c.pending.deviceConsents[device] = isConsentGiven
            } else {
                changed = c.serviceConsent != isConsentGiven
                c.serviceConsent = isConsentGiven
                c.pending.serviceConsent = isConsentGiven
            }
            return (changed, c.commitTicket(force: true))
        }
        let failure = ticket.flatMap(commit(through:))
        notify(errors: failure.map { [$0] } ?? [], consent: changed ? [(device, isConsentGiven)] : [])
        if let failure { throw failure }
    }

    /// Whether consent is given: for `device` (service-wide consent included), or service-wide when `nil`.
    public func userConsent(for device: DeviceID? = nil) throws(GeofencingError) -> Bool {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> Bool in
            let options = try c.configured()
            guard let device else { return c.serviceConsent }
            return c.hasConsent(device, options: options)
        }
    }
}
