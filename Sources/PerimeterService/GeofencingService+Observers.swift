import PerimeterEngine

extension GeofencingService {
    /// Registers `observer` (once; adding it again does nothing). An ``ExtendedGeofencingObserver``
    /// also hears cross and inside events and per-device consent changes.
    public func addObserver(_ observer: any GeofencingObserver) {
        core.withLock { c in
            if !c.observers.contains(where: { $0 === observer }) { c.observers.append(observer) }
        }
    }

    /// Unregisters `observer`.
    public func removeObserver(_ observer: any GeofencingObserver) {
        core.withLock { c in c.observers.removeAll { $0 === observer } }
    }

    /// A stream of every event logged from now on, in log order, for `for await` users.
    ///
    /// The stream ends when the service is closed or deallocated, or when the consumer stops iterating.
    public func events(bufferingPolicy: AsyncStream<GeofencingEvent>.Continuation.BufferingPolicy = .unbounded)
        -> AsyncStream<GeofencingEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: GeofencingEvent.self, bufferingPolicy: bufferingPolicy)
        let id = core.withLock { c in
            let id = c.nextStreamID
            c.nextStreamID += 1
            c.streams[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.core.withLock { c in c.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Sets the one *event sink*: called with the events each call logs, in log order across all
    /// calls and threads (a stream's order, without a task per event), while the call still holds the
    /// service's lock — so it must be quick (hand the events to another thread) and must not call the
    /// service or read its store (an ``InMemoryGeofencingStore`` a service commits to answers reads under
    /// that service's lock, which the sink's thread already holds). For a server that feeds its event streams from one thread of its own; `nil` removes it.
    /// The sink stays set across ``configure(_:)`` and ``close()``.
    ///
    /// With `whenStored`, the sink hears the events only once the commit that stored them succeeded
    /// (still in log order, still under the lock): what it sees can no longer be taken back by a crash,
    /// even with a timed group commit (``GeofencingOptions/Durability/everyUpdates(_:)``), at the cost
    /// of hearing them up to a commit interval later. A server's event stream wants that.
    public func setEventSink(whenStored: Bool = false, _ sink: (@Sendable ([GeofencingEvent]) -> Void)?) {
        core.withLock {
            $0.sink = sink
            $0.sinkWhenStored = whenStored
        }
    }

    /// Tells the observers, outside the lock.
    func notify(events: [GeofencingEvent] = [], errors: [GeofencingError] = [],
                consent: [(DeviceID?, Bool)] = []) {
        guard !events.isEmpty || !errors.isEmpty || !consent.isEmpty else { return }
        // A read: the device states owed to the in-memory store stay owed (``ServiceCore/lockTaken()``).
        let observers = core.withLockAsIs { $0.observers }
        guard !observers.isEmpty else { return }
        for observer in observers {
            let extended = observer as? any ExtendedGeofencingObserver
            for logged in events {
                switch logged.event.kind {
                case .entry: observer.onEntry(event: logged)
                case .dwell: observer.onDwell(event: logged)
                case .exit: observer.onExit(event: logged)
                case .cross: extended?.onCross(event: logged)
                case .inside: extended?.onInside(event: logged)
                }
            }
            for error in errors { observer.onError(error: error) }
            for (device, given) in consent {
                if let device {
                    extended?.onUserConsentChanged(device: device, isConsentGiven: given)
                } else {
                    observer.onUserConsentChanged(isConsentGiven: given)
                }
            }
        }
    }
}
