import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterServer
import Testing

/// The map page moves device dots from `event: location` messages (between events), in headless Chromium.
@Suite("Map page positions in Chromium", .serialized)
struct MapPageLocationTests {
    @Test(.enabled(if: BrowserSession.isAvailable))
    func positionsMoveTheDeviceDot() async throws {
        let server = try PerimeterServer(configuration: ServerConfiguration(port: 0, threads: 4))
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        #expect(try client.request("PUT", "/v1/fences/park", body: Array(T.square(name: "Park").utf8)).status == 201)

        let browser = try BrowserSession()
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(server.port)/")
        try await browser.wait("document.body.dataset.fences === 'ready' && document.body.dataset.stream === 'open'")
        // The page says "open" when the response head arrived, so the hub has the client; publishing
        // again until the dot exists only guards against a slow page (the throttle sends at most one
        // position per 0.25 s, and the last held back one after the interval).
        let dot = "document.querySelector('[data-device-id=\"van-9\"]')"
        for attempt in 0..<100 {
            server.api.hub.publishLocations([LocationUpdate(
                device: "van-9", time: Date(timeIntervalSince1970: 1_750_000_000 + Double(attempt)),
                latitude: 44.61, longitude: -110.52)])
            if try browser.eval("\(dot) !== null")?.boolValue == true { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        try await browser.wait("\(dot) !== null && \(dot).dataset.latitude === '44.61'")
        #expect(try browser.eval("\(dot).dataset.longitude")?.stringValue == "-110.52")
        // No event was logged: the dot moved from the position alone, and the banner still waits.
        #expect(server.service.lastEventSequence == 0)
        #expect(try browser.eval("document.getElementById('log').childElementCount")?.doubleValue == 0)
        let console = try browser.console()
        #expect(!console.contains { $0.hasPrefix("exception") }, "\(console)")
    }
}
