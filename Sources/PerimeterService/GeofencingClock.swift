import Foundation
import Synchronization

/// Where a live ``GeofencingService`` reads the time (``GeofencingOptions/TimeModel/live``).
///
/// The service never asks a device what time it is: its own clock decides when timers fire and which
/// update times lie in the future. Production uses ``SystemClock``; tests inject a ``ManualClock``.
public protocol GeofencingClock: Sendable {
    /// The current time.
    func now() -> Date
}

/// The system's wall clock (`Date()`).
public struct SystemClock: GeofencingClock {
    /// Creates the system clock.
    public init() {}

    /// `Date()`.
    public func now() -> Date { Date() }
}

/// A clock that moves only when told: for tests of live timing, deterministic and instant.
///
/// Create the service with `tickInterval: nil` beside it and call ``GeofencingService/tick()`` after
/// moving the clock, so that nothing fires behind the test's back.
public final class ManualClock: GeofencingClock {
    private let time: Mutex<Date>

    /// A clock showing `start`.
    public init(_ start: Date) { time = Mutex(start) }

    /// The time it shows.
    public func now() -> Date { time.withLock { $0 } }

    /// Moves the clock by `seconds` (may be negative: a clock can be set back).
    public func advance(by seconds: Double) { time.withLock { $0.addTimeInterval(seconds) } }

    /// Sets the clock to `date`.
    public func set(_ date: Date) { time.withLock { $0 = date } }
}

/// The thread that calls ``GeofencingService/tick()`` every interval while the service lives.
///
/// It holds the service weakly and ends by itself once the service is gone, or at ``stop()``.
final class ServiceTicker: Sendable {
    private let stopped = Mutex(false)

    /// Starts the thread.
    init(interval: Double, service: GeofencingService) {
        let thread = Thread { [weak service, self] in
            while !isStopped {
                Thread.sleep(forTimeInterval: interval)
                guard let service, !isStopped else { return }
                // A failed commit was reported to the observers; its changes stay pending for the next.
                _ = try? service.tick()
            }
        }
        thread.name = "perimeter-service-clock"
        thread.start()
    }

    private var isStopped: Bool { stopped.withLock { $0 } }

    /// Ends the thread after its current tick (it does not wait).
    func stop() { stopped.withLock { $0 = true } }
}
