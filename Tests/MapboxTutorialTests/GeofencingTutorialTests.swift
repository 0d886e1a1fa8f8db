import Foundation
import MapboxTutorial
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterService
import Testing

@Suite("The Mapbox tutorial's Geofencing class, ported")
struct GeofencingTutorialTests {
    /// Starts `geofencing` and waits for its completion.
    private func start(_ geofencing: Geofencing, options: GeofencingOptions) async throws {
        let result = await withCheckedContinuation { continuation in
            geofencing.start(options: options) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    @Test("a drive past Old Faithful, Grand Prismatic Spring and across Yellowstone Lake: entry, dwell and exit reach it")
    func drive() async throws {
        let service = GeofencingService()
        let geofencing = Geofencing(service: service)
        // The data clock: the drive's own times move the timers, so the test needs no waiting.
        try await start(geofencing, options: GeofencingOptions(timeModel: .data))
        #expect(try service.features().map { $0.id?.description ?? "" } == ["old-faithful", "grand-prismatic", "yellowstone-lake"])
        #expect(geofencing.log.prefix(3) == ["monitoring old-faithful", "monitoring grand-prismatic", "monitoring yellowstone-lake"])

        let start = Date(timeIntervalSince1970: 1_750_000_000)
        let drive: [(Double, Double, Double)] = [  // seconds, latitude, longitude
            (0, 44.4605, -110.8281),     // at Old Faithful
            (45, 44.4610, -110.8285),
            (90, 44.4608, -110.8280),    // more than its one-minute dwell time later
            (300, 44.5000, -110.8300),   // between the two
            (600, 44.5262, -110.8382),   // ≈ 120 m from Grand Prismatic Spring: inside its default 300 m
            (900, 44.6000, -110.7000),   // away
            (1500, 44.4200, -110.3500),  // on the lake
            (2100, 44.6500, -110.2000),  // off it
        ]
        for (seconds, latitude, longitude) in drive {
            try geofencing.locationChanged(LocationUpdate(device: "car", time: start.addingTimeInterval(seconds),
                                                          latitude: latitude, longitude: longitude))
        }
        let heard = geofencing.log.dropFirst(3).map { $0.components(separatedBy: " at ")[0] }
        #expect(heard == [
            "Entered Old Faithful", "Dwelled in Old Faithful", "Exited Old Faithful",
            "Entered Grand Prismatic Spring", "Exited Grand Prismatic Spring",
            "Entered Yellowstone Lake", "Exited Yellowstone Lake",
        ])
        #expect(geofencing.log[3] == "Entered Old Faithful at 2025-06-15T15:06:40Z")
        #expect(geofencing.lastEvent?.event.kind == .exit)
        #expect(geofencing.lastEvent?.feature.id == .string("yellowstone-lake"))

        try await withCheckedContinuation { continuation in
            geofencing.stop { continuation.resume(returning: $0) }
        }.get()
        #expect(try service.features().isEmpty)
    }

    @Test("an error in start reaches its completion")
    func failure() async throws {
        let geofencing = Geofencing(service: GeofencingService())
        await #expect(throws: GeofencingError.self) {
            try await start(geofencing, options: GeofencingOptions(maximumMonitoredFeatures: 2))
        }
        #expect(geofencing.log == ["monitoring old-faithful", "monitoring grand-prismatic"])
    }
}
