import PerimeterEngine

extension GeofencingService {
    /// Records the user's consent to location processing: for `device`, or service-wide when `device`
    /// is `nil` (Mapbox's user consent). Without consent no update is processed or stored. Committed
    /// before it returns. When the value changes, observers hear
    /// ``GeofencingObserver/onUserConsentChanged(isConsentGiven:)`` (service-wide) or
    /// ``ExtendedGeofencingObserver/onUserConsentChanged(device:isConsentGiven:)`` (one device).
    ///
    /// With a ``DetectionRelay`` that shares consent the change is stored through the relay first
    /// (``DetectionRelay/relayConsent(_:for:)``), then applied here; nothing changes when the relay
    /// cannot store it.
    ///
    /// Revoking consent keeps the state already stored for the device; remove the store's file (or
    /// use a new store) to erase it.
    public func setUserConsent(_ isConsentGiven: Bool, for device: DeviceID? = nil) throws(GeofencingError) {
        guard let relay else {
            try changeConsent(isConsentGiven, for: device, position: nil)
            return
        }
        // Refused before anything is stored, as without a relay.
        _ = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) in try c.configured() }
        let position = try relay.relayConsent(isConsentGiven, for: device)
        try changeConsent(isConsentGiven, for: device, position: position)
    }

    /// Applies a consent change read from where the ``DetectionRelay`` stores them (another service's,
    /// or this one's coming back): for `device`, or service-wide when `nil`, at the relay's `position`.
    /// A change older than the one applied last to the same consent is ignored, so the changes may
    /// arrive in any order and more than once. Otherwise as ``setUserConsent(_:for:)`` without the
    /// relay: committed, and observers hear of it only when the value changes (a change this service
    /// made itself and applied already is not announced again).
    /// - Returns: whether it was applied (`false`: a change at this position or later was applied before).
    @discardableResult
    public func applyRelayedConsent(_ isConsentGiven: Bool, for device: DeviceID?, position: UInt64) throws(GeofencingError) -> Bool {
        try changeConsent(isConsentGiven, for: device, position: position)
    }

    /// Sets the consent (with a `position`, only when it is later than the last applied), commits and
    /// notifies. - Returns: whether it was applied.
    @discardableResult
    private func changeConsent(_ isConsentGiven: Bool, for device: DeviceID?, position: UInt64?) throws(GeofencingError) -> Bool {
        let (applied, changed, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> (Bool, Bool, UInt64?) in
            let options = try c.configured()
            if let position {
                guard position > c.consentPositions[device] ?? 0 else { return (false, false, nil) }
                c.consentPositions[device] = position
            }
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
            return (true, changed, c.commitTicket(force: true))
        }
        let failure = ticket.flatMap(commit(through:))
        notify(errors: failure.map { [$0] } ?? [], consent: changed ? [(device, isConsentGiven)] : [])
        if let failure { throw failure }
        return applied
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
