import Foundation
import PerimeterEngine
import PerimeterGeometry
@testable import PerimeterServer
import PerimeterService
import Synchronization
import Testing

@Suite("EventFeeder: the service's events to the hub, in order, a few at a time")
struct EventFeederTests {
    static func logged(_ sequence: Int64) -> GeofencingEvent {
        GeofencingEvent(sequence: sequence, event: GeofenceEvent(
            id: "e\(sequence)", visitID: "v\(sequence)", kind: .entry, fence: "f", device: "d",
            time: Date(timeIntervalSince1970: Double(sequence)), coordinate: Coordinate(latitude: 0, longitude: 0)))
    }

    /// Events appended in bursts are published in order, each once, in far fewer calls than appends
    /// (they gather for the coalescing interval); `stop` publishes what is still queued.
    @Test func burstsArePublishedInOrderAndTogether() {
        let published = Mutex<(sequences: [Int64], calls: Int)>(([], 0))
        let feeder = EventFeeder(coalescing: 0.02) { events in
            published.withLock {
                $0.sequences += events.map(\.sequence)
                $0.calls += 1
            }
        }
        var next: Int64 = 1
        for _ in 0..<5 {
            for _ in 0..<20 {
                feeder.append([Self.logged(next), Self.logged(next + 1)])
                next += 2
            }
            usleep(30_000)
        }
        for _ in 0..<10 {
            feeder.append([Self.logged(next)])
            next += 1
        }
        feeder.stop()
        let result = published.withLock { $0 }
        #expect(result.sequences == Array(1..<next))
        #expect(result.calls <= 12, "\(result.calls) publications for 110 appends")
        feeder.stop()  // a second stop returns at once
    }
}
