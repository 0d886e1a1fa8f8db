import Foundation
import Testing
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTestSupport
import PerimeterTracks

/// Event ids on a real recorded track: unique within the device's history, and unchanged when the
/// whole track is posted twice over (every update repeated at once, a retried upload).
@Suite(.enabled(if: Fixtures.available))
struct TrackEventIdentityTests {
    @Test("a real bike track: ids unique; every update sent twice gives the same events and ids")
    func bikeTrack() throws {
        let track = try TrackReader(device: "bike").read(try Fixtures.data("tracks/gpx/devices/bike.gpx"), source: "bike.gpx")
        #expect(track.updates.count == 1812)
        // Circles of 40 m around every 60th fix, with a dwell: the ride enters, dwells in and leaves them.
        let fences = stride(from: 0, to: track.updates.count, by: 60).map { i in
            Fence(id: FenceID("stop-\(i)"), region: Region(.circle(center: track.updates[i].coordinate, radius: 40)),
                  dwellTime: 20)
        }
        var once = DetectionEngine(fences: fences)
        var twice = DetectionEngine(fences: fences)
        var a: [GeofenceEvent] = [], b: [GeofenceEvent] = []
        for update in track.updates {
            once.process(update, into: &a)
            twice.process(update, into: &b)
            twice.process(update, into: &b)
        }
        #expect(a.count > 50)
        #expect(Set(a.map(\.id)).count == a.count)
        #expect(Set(a.map(\.visitID)).count == a.filter { $0.kind == .entry }.count)
        #expect(a == b)
    }
}
