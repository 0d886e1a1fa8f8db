import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterService
import Synchronization

/// Prints the live demo's events as the ``GeofencingService`` reports them, and keeps the demo van's.
///
/// An observer rather than the service's `AsyncStream`: observers are called on the thread that
/// processed the update, after the commit and in event order, so every event of an update is printed
/// before the simulation records that update as sent — no task of the (two-thread) cooperative pool is
/// needed to consume a stream, and when the drive has ended all its events have been printed.
/// Events of other devices (drives started from the map page) are printed too, prefixed with the device.
final class DemoEventPrinter: ExtendedGeofencingObserver {
    /// The device whose events are kept.
    let device: DeviceID
    private let console: Console
    private let formatter: EventFormatter
    private let otherDevices: EventFormatter
    private let kept = Mutex<[GeofenceEvent]>([])

    /// Prints with `format` (names and messages come with the service's events).
    init(device: DeviceID, format: EventFormatter.Format, console: Console) {
        self.device = device
        self.console = console
        formatter = EventFormatter(format: format, manyDevices: false)
        otherDevices = EventFormatter(format: format, manyDevices: true)
    }

    /// The demo device's events so far, in log order.
    var events: [GeofenceEvent] { kept.withLock { $0 } }

    func onEntry(event: GeofencingEvent) { show(event) }
    func onDwell(event: GeofencingEvent) { show(event) }
    func onExit(event: GeofencingEvent) { show(event) }
    func onCross(event: GeofencingEvent) { show(event) }
    func onInside(event: GeofencingEvent) { show(event) }
    /// The demo does not change consent.
    func onUserConsentChanged(isConsentGiven: Bool) {}
    /// The demo does not change consent.
    func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool) {}

    /// A rejected update of the demo device is worth a line on standard error (it changes the events).
    func onError(error: GeofencingError) {
        guard error.device == device else { return }
        console.complain("demo: an update of \(device) was rejected: \(error.message)")
    }

    private func show(_ logged: GeofencingEvent) {
        let event = logged.event
        if event.device == device {
            // Keep and print under one lock, so the kept order is the printed order.
            kept.withLock { events in
                events.append(event)
                console.print(formatter.line(for: logged))
            }
        } else {
            console.print(otherDevices.line(for: logged))
        }
    }
}
