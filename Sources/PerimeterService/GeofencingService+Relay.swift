import Dispatch
import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import Synchronization

/// What a service with a ``DetectionRelay`` knows of one device: only what passed through it.
struct RelayedDevice {
    /// The latest time of an update it relayed or an event it logged for the device.
    var lastTime: Date?
    /// The visits its logged events left open, by fence.
    var presence: [FenceID: Presence] = [:]
}

extension GeofencingService {
    /// Relays `batch`: the checks that need no device state under the lock, then the accepted updates
    /// to `relay`; `completion` gets the rejections (and no events: they come back later through
    /// ``logRelayedEvents(_:)``) once the relay stored the rest.
    func relayBatch<Updates: Collection>(_ batch: Updates, simulated: Bool, to relay: any DetectionRelay,
                                         completion: @escaping @Sendable (Result<BatchResult, GeofencingError>) -> Void)
    where Updates.Element == LocationUpdate {
        let now = clock.now().timeIntervalSince1970
        let checked = Result { () throws(GeofencingError) -> (BatchResult, [LocationUpdate]) in
            try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> (BatchResult, [LocationUpdate]) in
                let options = try c.configured()
                try Self.checkConsent(batch, c, options)
                var result = BatchResult()
                var accepted: [LocationUpdate] = []
                accepted.reserveCapacity(batch.count)
                let latestAccepted = options.timeModel == .live && !simulated ? now + options.maximumFutureSkew : nil
                for (index, update) in batch.enumerated() {
                    if let refusal = Self.refusalBeforeEngine(update, latestAccepted: latestAccepted, now: now,
                                                              options: options, statistics: &c.timeStatistics) {
                        result.rejections.append(.init(index: index, error: refusal))
                    } else {
                        accepted.append(update)
                    }
                }
                c.processedUpdates += UInt64(batch.count)
                return (result, accepted)
            }
        }
        switch checked {
        case .failure(let error):
            completion(.failure(error))
        case .success(let (result, accepted)) where accepted.isEmpty:
            notify(errors: result.rejections.map(\.error))
            completion(.success(result))
        case .success(let (result, accepted)):
            relay.relay(accepted) { [self] failure in
                if failure == nil {
                    // Only what the relay stored counts as heard from.
                    core.withLock { c in
                        for update in accepted {
                            let known = c.relayedDevices[update.device]?.lastTime ?? .distantPast
                            c.relayedDevices[update.device, default: RelayedDevice()].lastTime = max(known, update.time)
                        }
                    }
                }
                notify(errors: result.rejections.map(\.error) + (failure.map { [$0] } ?? []))
                completion(failure.map { .failure($0) } ?? .success(result))
            }
        }
    }

    /// ``relayBatch(_:simulated:to:completion:)``, waiting for the relay (the synchronous `process` calls).
    func relayBatchAndWait<Updates: Collection>(_ batch: Updates, simulated: Bool, to relay: any DetectionRelay)
        throws(GeofencingError) -> BatchResult where Updates.Element == LocationUpdate {
        let outcome = Mutex<Result<BatchResult, GeofencingError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        relayBatch(batch, simulated: simulated, to: relay) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }

    /// Logs `events` that the detecting processes produced (a service with a ``DetectionRelay``), in
    /// the order given — the order they were stored there, so every API node numbers them alike: each
    /// gets the next sequence number and its fence's name, group, properties and message as this service
    /// knows the fence, is stored, published to the streams and sink, and told to the observers. The
    /// device status (``deviceStatus(of:)``) follows the events: an entry opens a visit, a dwell marks
    /// it, an exit closes it.
    /// - Returns: the logged events.
    @discardableResult
    public func logRelayedEvents(_ events: [GeofenceEvent]) throws(GeofencingError) -> [GeofencingEvent] {
        let (logged, ticket) = try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> ([GeofencingEvent], UInt64?) in
            _ = try c.configured()
            for event in events {
                var device = c.relayedDevices[event.device] ?? RelayedDevice()
                device.lastTime = max(device.lastTime ?? .distantPast, event.time)
                switch event.kind {
                case .entry, .inside:
                    device.presence[event.fence] = Presence(fence: event.fence, since: event.time, visitID: event.visitID,
                                                            hasDwelled: false)
                case .dwell:
                    device.presence[event.fence]?.hasDwelled = true
                case .exit:
                    device.presence[event.fence] = nil
                case .cross:
                    break
                }
                c.relayedDevices[event.device] = device
            }
            var logged: [GeofencingEvent] = []
            c.log(events, into: &logged)
            return (logged, logged.isEmpty ? nil : c.commitTicket(force: true))
        }
        return try finish(logged, ticket)
    }

    /// Applies fence changes read from where the relay stores them (another API node's, or this one's
    /// coming back) to this service only: `upserted` added or replaced (in one index build when none is
    /// refused), then `removed` removed.
    /// - Returns: the features that could not be applied, with the reason (a feature these options
    ///   refuse; the detecting processes decide for themselves).
    @discardableResult
    public func applyRelayedFences(upserted: [GeoJSON.Feature], removed: [FenceID]) throws(GeofencingError)
        -> [(feature: GeoJSON.Feature, error: GeofencingError)] {
        var refused: [(feature: GeoJSON.Feature, error: GeofencingError)] = []
        do throws(GeofencingError) {
            // All at once (one index build) unless one is refused; then one by one, so that only the
            // refused ones are left out.
            if !upserted.isEmpty { try applyFeatures(upserted) }
        } catch where error.code == .invalidFeature || error.code == .limitExceeded {
            for feature in upserted {
                do throws(GeofencingError) {
                    try applyFeatures([feature])
                } catch where error.code == .invalidFeature || error.code == .limitExceeded {
                    refused.append((feature, error))
                }
            }
        }
        if !removed.isEmpty {
            let doomed = Set(removed)
            _ = try removeFeatures(relaying: false) { doomed.contains($0.id) }
        }
        return refused
    }

    /// The checks of ``addFeatures(_:)`` before anything changes: every feature is a fence, and the
    /// limit holds.
    func checkFeatures(_ features: [GeoJSON.Feature]) throws(GeofencingError) {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) in
            let options = try c.configured()
            var ids: Set<FenceID> = []
            for (index, feature) in features.enumerated() {
                ids.insert(try c.makeFence(feature, options: options, index: features.count > 1 ? index : nil).id)
            }
            let total = c.features.count + ids.filter { c.features[$0] == nil }.count
            if total > options.maximumMonitoredFeatures {
                throw GeofencingError(.limitExceeded,
                                      "adding \(total - c.features.count) new features would monitor \(total), more than maximumMonitoredFeatures (\(options.maximumMonitoredFeatures)); remove features or raise the limit in configure(_:)")
            }
        }
    }

    /// The status of `device` as the relayed updates and logged events say (``DeviceStatus/isDerivedFromEvents``).
    func relayedDeviceStatus(of device: DeviceID) throws(GeofencingError) -> DeviceStatus {
        try core.withLock { (c: inout ServiceCore) throws(GeofencingError) -> DeviceStatus in
            let options = try c.configured()
            let known = c.relayedDevices[device]
            return DeviceStatus(device: device, lastUpdateTime: known?.lastTime,
                                presence: (known?.presence.values).map { $0.sorted { $0.fence.rawValue < $1.fence.rawValue } } ?? [],
                                isConsentGiven: c.hasConsent(device, options: options), isDerivedFromEvents: true)
        }
    }
}
