import Foundation
import PerimeterEngine
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import Testing
import PerimeterTestSupport

// MARK: - The page's resources

@Suite("Map page resources")
struct MapPageResourceTests {
    @Test(arguments: ["/", "/index.html"])
    func pageIsHTMLWithItsHooks(path: String) throws {
        let response = try #require(MapPage.response(for: path))
        #expect(response.status == 200)
        #expect(response.header("content-type") == "text/html; charset=utf-8")
        let csp = try #require(response.header("content-security-policy"))
        #expect(csp.contains("script-src 'self'"))
        #expect(!csp.contains("unsafe-inline"))
        let html = String(decoding: response.bodyBytes, as: UTF8.self)
        for hook in ["id=\"banner\"", "id=\"log\"", "id=\"device-filter\"", "id=\"sim-start\"", "src=\"/map.js\"",
                     "href=\"/map.css\""] {
            #expect(html.contains(hook), "the page lacks \(hook)")
        }
        for remote in ["src=\"http", "href=\"http", "src=\"//", "href=\"//", "url(http"] {
            #expect(!html.contains(remote), "the page must not load anything from the network (\(remote))")
        }
    }

    @Test func scriptAndStyleAreServedAndSelfContained() throws {
        let script = try #require(MapPage.response(for: "/map.js"))
        #expect(script.header("content-type") == "text/javascript; charset=utf-8")
        let js = String(decoding: script.bodyBytes, as: UTF8.self)
        for needle in ["rgba(7,144,30,0.8)", "rgba(173,17,5,0.8)", "rgba(17,97,195,0.8)", "rgba(119,119,119,1)",
                       "data-fence-id", "data-fill", "/v1/events/stream?after=", "/v1/fences?limit=", "nextCursor",
                       "/v1/simulations"] {
            #expect(js.contains(needle), "map.js lacks \(needle)")
        }
        let style = try #require(MapPage.response(for: "/map.css"))
        #expect(style.header("content-type") == "text/css; charset=utf-8")
        #expect(String(decoding: style.bodyBytes, as: UTF8.self).contains("opacity: .7"))
    }

    @Test(arguments: ["/map", "/v1/fences", "/index.htm", "/map.js/", ""])
    func otherPathsAreNotThePage(path: String) {
        #expect(MapPage.response(for: path) == nil)
    }
}

// MARK: - Simulated drives

@Suite("Simulation runner")
struct SimulationRunnerTests {
    static let square = #"{"type":"Feature","id":"box","properties":{"name":"Box"},"geometry":{"type":"Polygon","coordinates":[[[10,50],[10.2,50],[10.2,50.1],[10,50.1],[10,50]]]}}"#

    static func service() throws -> GeofencingService {
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        let result = GeoJSONReader().read(Array(square.utf8))
        guard case .feature(let feature)? = result.object else { throw MapPageTestError("fixture square does not parse") }
        try service.addFeature(feature)
        return service
    }

    static func body(device: String = "car", path: [[Double]], speed: Double = 100, interval: Double = 1,
                     timeScale: Double = 10_000) -> [UInt8] {
        let coordinates = JSONValue.array(path.map { .array($0.map { .double($0) }) })
        let value: JSONValue = ["deviceId": .string(device), "speed": .double(speed), "interval": .double(interval),
                                "timeScale": .double(timeScale), "path": ["type": "LineString", "coordinates": coordinates]]
        var bytes: [UInt8] = []
        JSONWriter().write(value, into: &bytes)
        return bytes
    }

    /// Waits (without asserting on time) until the simulation is no longer running.
    static func waitUntilEnded(_ runner: SimulationRunner, _ id: String) async throws -> JSONValue {
        for _ in 0..<6000 {
            let value = try runner.simulation(id: id)
            if value["status"]?.stringValue != "running" { return value }
            try await Task.sleep(nanoseconds: 5_000_000)
        }
        throw MapPageTestError("simulation \(id) did not end")
    }

    struct BadBody: Sendable, CustomTestStringConvertible {
        var body: String
        var status: Int
        var pointer: String?
        var testDescription: String { body }
    }

    static let badBodies: [BadBody] = [
        BadBody(body: "", status: 400, pointer: nil),
        BadBody(body: "{", status: 400, pointer: nil),
        BadBody(body: "[]", status: 422, pointer: ""),
        BadBody(body: #"{"path":{"type":"LineString","coordinates":[[0,0],[1,1]]},"speed":5}"#, status: 422, pointer: "/deviceId"),
        BadBody(body: #"{"deviceId":"","path":{"type":"LineString","coordinates":[[0,0],[1,1]]},"speed":5}"#, status: 422, pointer: "/deviceId"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[1,1]]}}"#, status: 422, pointer: "/speed"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[1,1]]},"speed":0}"#, status: 422, pointer: "/speed"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[1,1]]},"speed":"fast"}"#, status: 422, pointer: "/speed"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[1,1]]},"speed":5,"interval":-1}"#, status: 422, pointer: "/interval"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[1,1]]},"speed":5,"timeScale":1e9}"#, status: 422, pointer: "/timeScale"),
        BadBody(body: #"{"deviceId":"a","speed":5}"#, status: 422, pointer: "/path"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"Point","coordinates":[0,0]},"speed":5}"#, status: 422, pointer: "/path/type"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"Feature","properties":{},"geometry":{"type":"Point","coordinates":[0,0]}},"speed":5}"#, status: 422, pointer: "/path/geometry/type"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[1,"x"]]},"speed":5}"#, status: 422, pointer: "/path/coordinates/1/1"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[1,95]]},"speed":5}"#, status: 422, pointer: "/path/coordinates/1/1"),
        BadBody(body: #"{"deviceId":"a","path":{"type":"LineString","coordinates":[[0,0],[100,0]]},"speed":0.001}"#, status: 422, pointer: "/path"),
    ]

    @Test(arguments: badBodies)
    func badRequestsAreRefusedWithWhere(bad: BadBody) throws {
        let runner = SimulationRunner(service: try Self.service())
        do throws(Problem) {
            _ = try runner.start(Array(bad.body.utf8))
            Issue.record("accepted \(bad.body)")
        } catch {
            #expect(error.status == bad.status, "\(error.detail)")
            if let pointer = bad.pointer {
                #expect((error.pointer ?? "") == pointer, "\(error.detail)")
            }
            #expect(!error.detail.isEmpty)
        }
        #expect(runner.runningCount == 0)
        #expect(runner.list()["simulations"]?.arrayValue?.isEmpty == true)
    }

    @Test func featureWithLineStringIsAcceptedAndDrivesToTheEnd() async throws {
        let service = try Self.service()
        let runner = SimulationRunner(service: service)
        let body = #"{"deviceId":"van","speed":200,"timeScale":5000,"path":{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":[[9.9,50.05],[10.3,50.05]]}}}"#
        let started = try runner.start(Array(body.utf8))
        #expect(started["status"]?.stringValue == "running")
        #expect(started["deviceId"]?.stringValue == "van")
        let id = try #require(started["id"]?.stringValue)
        let ended = try await Self.waitUntilEnded(runner, id)
        #expect(ended["status"]?.stringValue == "finished")
        #expect(ended["sent"] == ended["updates"])
        #expect(ended["rejected"]?.int64Value == 0)
        #expect(ended["events"]?.int64Value == 2)
        #expect(ended["position"]?["longitude"]?.doubleValue == 10.3)
        let kinds = try service.loggedEvents(after: 0).map(\.event.kind.rawValue)
        #expect(kinds == ["entry", "exit"])
    }

    @Test func stopEndsADriveAndUnknownIDsAre404() async throws {
        let service = try Self.service()
        let runner = SimulationRunner(service: service)
        let started = try runner.start(Self.body(path: [[9.9, 50.05], [10.3, 50.05]], speed: 1, timeScale: 1))
        let id = try #require(started["id"]?.stringValue)
        #expect(runner.runningCount == 1)
        let stopped = try runner.stop(id: id)
        #expect(stopped["status"]?.stringValue == "stopped")
        #expect(stopped["endedAt"] != nil)
        #expect(runner.runningCount == 0)
        // Stopping again changes nothing.
        #expect(try runner.stop(id: id)["status"]?.stringValue == "stopped")
        #expect(throws: Problem.self) { try runner.stop(id: "sim-999") }
        do throws(Problem) { _ = try runner.simulation(id: "nope") } catch { #expect(error.status == 404) }
    }

    @Test func runningLimitAndStopAllAreEnforced() throws {
        let runner = SimulationRunner(service: try Self.service(), maximumRunning: 1)
        let slow = Self.body(path: [[9.9, 50.05], [10.3, 50.05]], speed: 1, timeScale: 1)
        _ = try runner.start(slow)
        do throws(Problem) {
            _ = try runner.start(slow)
            Issue.record("a second simulation started beyond the limit")
        } catch {
            #expect(error.status == 409)
        }
        runner.stopAll()
        #expect(runner.runningCount == 0)
        do throws(Problem) {
            _ = try runner.start(slow)
            Issue.record("a simulation started after stopAll")
        } catch {
            #expect(error.status == 503)
        }
        let list = runner.list()["simulations"]?.arrayValue ?? []
        #expect(list.count == 1)
        #expect(list.first?["status"]?.stringValue == "stopped")
    }

    @Test func endedSimulationsAreForgottenBeyondTheKeptCount() async throws {
        let runner = SimulationRunner(service: try Self.service(), keptEnded: 2)
        var ids: [String] = []
        for index in 0..<4 {
            let started = try runner.start(Self.body(device: "d\(index)", path: [[9.0, 49.0], [9.001, 49.0]]))
            let id = try #require(started["id"]?.stringValue)
            _ = try await Self.waitUntilEnded(runner, id)
            ids.append(id)
        }
        let listed = (runner.list()["simulations"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
        #expect(listed == Array(ids.suffix(2)))
    }

    /// Random paths around a rectangle: the events the runner causes must agree with a brute-force
    /// reading of the path (clipping each segment against the rectangle in the lon/lat plane).
    @Test(arguments: [1, 2, 3, 4, 5, 6] as [UInt64])
    func eventsAgreeWithBruteForceClipping(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let rect = (west: 10.0, south: 50.0, east: 10.2, north: 50.1)
        func inside(_ p: [Double]) -> Bool { p[0] >= rect.west && p[0] <= rect.east && p[1] >= rect.south && p[1] <= rect.north }
        var path: [[Double]] = [[9.9, Double.random(in: 49.95...50.15, using: &random)]]
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            path.append([Double.random(in: 9.9...10.3, using: &random), Double.random(in: 49.95...50.15, using: &random)])
        }
        let speed = 100.0, interval = 1.0
        let service = try Self.service()
        let runner = SimulationRunner(service: service)
        let started = try runner.start(Self.body(path: path, speed: speed, interval: interval))
        let ended = try await Self.waitUntilEnded(runner, try #require(started["id"]?.stringValue))
        #expect(ended["status"]?.stringValue == "finished")
        #expect(ended["sent"] == ended["updates"])
        #expect(ended["rejected"]?.int64Value == 0)

        let events = try service.loggedEvents(after: 0).map(\.event).filter { $0.kind == .entry || $0.kind == .exit }
        // Alternation, starting with an entry (the path starts west of the rectangle).
        for (index, event) in events.enumerated() {
            #expect(event.kind == (index % 2 == 0 ? .entry : .exit), "event \(index) of \(events.map(\.kind))")
        }
        // Each event happened at a position on the path, inside (entry) or outside (exit).
        for event in events {
            let p = [event.coordinate.longitude, event.coordinate.latitude]
            #expect(inside(p) == (event.kind == .entry))
            let onPath = zip(path, path.dropFirst()).contains { a, b in MapPageGeometry.distanceToSegment(p, a, b) < 1e-9 }
            #expect(onPath, "event position \(p) is not on the path")
        }
        // Brute force: inside intervals along the path.
        let intervals = MapPageGeometry.insideIntervals(path, rect: rect)
        let entries = events.filter { $0.kind == .entry }.count
        #expect(entries <= intervals.count)
        if intervals.isEmpty { #expect(events.isEmpty) }
        if intervals.contains(where: { $0 > 3 * speed * interval }) { #expect(entries >= 1) }
        // Where the drive ended decides whether the device is still inside.
        let status = try service.deviceStatus(of: DeviceID("car"))
        #expect(status.presence.isEmpty == !inside(path[path.count - 1]))
    }
}

// MARK: - The page in a real headless Chromium

@Suite("Map page in Chromium", .serialized)
struct MapPageBrowserTests {
    static let fences = #"""
    {"type": "FeatureCollection", "features": [
      {"type": "Feature", "id": "hayden", "properties": {"name": "Hayden Valley", "perimeter:group": "valleys"},
       "geometry": {"type": "Polygon", "coordinates": [
         [[-110.6, 44.5], [-110.4, 44.5], [-110.4, 44.7], [-110.6, 44.7], [-110.6, 44.5]],
         [[-110.52, 44.58], [-110.48, 44.58], [-110.48, 44.62], [-110.52, 44.62], [-110.52, 44.58]]]}},
      {"type": "Feature", "id": "lakes", "properties": {"name": "Twin Lakes"},
       "geometry": {"type": "MultiPolygon", "coordinates": [
         [[[-110.3, 44.5], [-110.25, 44.5], [-110.25, 44.55], [-110.3, 44.55], [-110.3, 44.5]]],
         [[[-110.3, 44.65], [-110.25, 44.65], [-110.25, 44.7], [-110.3, 44.7], [-110.3, 44.65]]]]}},
      {"type": "Feature", "id": "geyser", "properties": {"name": "Old Faithful", "perimeter:radius": 2000},
       "geometry": {"type": "Point", "coordinates": [-110.8, 44.6]}},
      {"type": "Feature", "id": "river", "properties": {"name": "Firehole River", "perimeter:radius": 800},
       "geometry": {"type": "LineString", "coordinates": [[-110.6, 44.4], [-110.3, 44.4]]}}
    ]}
    """#

    static let entry = "rgba(7,144,30,0.8)", exit = "rgba(173,17,5,0.8)", none = "rgba(119,119,119,1)"

    static func fill(_ fence: String) -> String {
        "document.querySelector('#fences g[data-fence-id=\"\(fence)\"]').dataset.fill"
    }

    @Test(.enabled(if: BrowserSession.isAvailable))
    func entryShowsInBannerAndFillAndSimulationsDrive() async throws {
        let server = try PerimeterServer(configuration: ServerConfiguration(port: 0, threads: 4))
        defer { server.stop() }
        let client = try TestClient(port: server.port)
        let imported = try client.request("POST", "/v1/fences", headers: ["Content-Type": "application/json"],
                                          body: Array(Self.fences.utf8))
        #expect(imported.status == 200, "\(imported.text)")
        let page = try client.request("GET", "/")
        #expect(page.status == 200)

        let browser = try BrowserSession()
        defer { browser.quit() }
        try browser.open("http://127.0.0.1:\(server.port)/")
        try await browser.wait("document.body.dataset.fences === 'ready' && document.body.dataset.stream === 'open'")

        // Every fence is drawn, fitted to the view, grey.
        #expect(try browser.eval("document.body.dataset.fenceCount")?.stringValue == "4")
        for fence in ["hayden", "lakes", "geyser", "river"] {
            #expect(try browser.eval(Self.fill(fence))?.stringValue == Self.none, "\(fence)")
        }
        let drawn = try browser.eval("""
            (() => { const r = document.getElementById('svg').getBoundingClientRect(); const out = {};
              for (const g of document.querySelectorAll('[data-fence-id]')) { const b = g.getBBox();
                out[g.dataset.fenceId] = { x: b.x, y: b.y, w: b.width, h: b.height, W: r.width, H: r.height,
                  areas: g.querySelectorAll('path.area').length, corridors: g.querySelectorAll('path.corridor').length,
                  holes: (g.querySelector('path.area') || {getAttribute: () => ''}).getAttribute('d').split('Z').length - 1 }; }
              return out; })()
            """)
        for fence in ["hayden", "lakes", "geyser", "river"] {
            let box = try #require(drawn?[fence], "\(fence) not drawn")
            let x = box["x"]?.doubleValue ?? -1, y = box["y"]?.doubleValue ?? -1
            let w = box["w"]?.doubleValue ?? 0, h = box["h"]?.doubleValue ?? 0
            let width = box["W"]?.doubleValue ?? 0, height = box["H"]?.doubleValue ?? 0
            #expect(w > 5 && h > 5, "\(fence) is too small: \(box)")
            #expect(x >= -1 && y >= -1 && x + w <= width + 1 && y + h <= height + 1, "\(fence) is outside the view: \(box)")
        }
        #expect(drawn?["hayden"]?["holes"]?.doubleValue == 2, "the polygon with a hole has two rings")
        #expect(drawn?["lakes"]?["areas"]?.doubleValue == 2, "the MultiPolygon has two parts")
        #expect(drawn?["geyser"]?["areas"]?.doubleValue == 1)
        #expect(drawn?["river"]?["corridors"]?.doubleValue == 1)
        let riverWidth = try browser.eval("Number(document.querySelector('[data-fence-id=\"river\"] path.corridor').getAttribute('stroke-width'))")
        #expect((riverWidth?.doubleValue ?? 0) > 2, "the corridor is drawn with its width")

        // Drive a device into Hayden Valley through the API.
        let drive: JSONValue = [
            ["deviceId": "truck-1", "latitude": 44.6, "longitude": -110.7, "time": "2025-06-01T10:31:00Z"],
            ["deviceId": "truck-1", "latitude": 44.65, "longitude": -110.45, "time": "2025-06-01T10:32:30Z"],
        ]
        let posted = try client.request("POST", "/v1/locations", headers: ["Content-Type": "application/json"],
                                         body: Array(JSONWriter().string(drive).utf8))
        #expect(posted.status == 200, "\(posted.text)")
        try await browser.wait("document.getElementById('banner').textContent === 'Entered Hayden Valley at 10:32'")
        #expect(try browser.eval(Self.fill("hayden"))?.stringValue == Self.entry)
        #expect(try browser.eval(Self.fill("geyser"))?.stringValue == Self.none)
        #expect(try browser.eval("document.querySelectorAll('[data-device-id=\"truck-1\"]').length")?.doubleValue == 1)
        #expect(try browser.eval("document.querySelector('#log li').textContent")?.stringValue?.contains("Hayden Valley") == true)
        let entryShot = MapPageArtifacts.path("map-page-entry.png")
        try browser.screenshot(entryShot)
        #expect(FileManager.default.fileExists(atPath: entryShot))

        // And out again.
        let out: JSONValue = ["deviceId": "truck-1", "latitude": 44.8, "longitude": -110.45, "time": "2025-06-01T10:33:10Z"]
        _ = try client.request("POST", "/v1/locations", headers: ["Content-Type": "application/json"],
                               body: Array(JSONWriter().string(out).utf8))
        try await browser.wait("document.getElementById('banner').textContent === 'Exited Hayden Valley at 10:33'")
        #expect(try browser.eval(Self.fill("hayden"))?.stringValue == Self.exit)

        // A simulated drive started from the page's panel: a tour through every fence.
        _ = try browser.eval("""
            (() => { document.getElementById('sim-track').value = 'tour';
              document.getElementById('sim-device').value = 'sim-1';
              document.getElementById('sim-speed').value = '400';
              document.getElementById('sim-scale').value = '200';
              document.getElementById('sim-start').click(); return true; })()
            """)
        try await browser.wait("document.querySelector('#sim-list li[data-status=\"finished\"]') !== null", timeout: 60)
        try await browser.wait("document.querySelector('[data-device-id=\"sim-1\"]') !== null && \(Self.fill("geyser")) === '\(Self.exit)'")
        let simulated = try server.service.loggedEvents(after: 0).filter { $0.event.device == DeviceID("sim-1") }
        #expect(Set(simulated.filter { $0.event.kind == .entry }.map(\.event.fence.rawValue)) == ["hayden", "lakes", "geyser", "river"])
        try browser.screenshot(MapPageArtifacts.path("map-page-simulation.png"))

        // The device filter recolours from that device's events only.
        _ = try browser.eval("(() => { const s = document.getElementById('device-filter'); s.value = 'truck-1'; s.dispatchEvent(new Event('change')); return true; })()")
        #expect(try browser.eval(Self.fill("geyser"))?.stringValue == Self.none)
        #expect(try browser.eval(Self.fill("hayden"))?.stringValue == Self.exit)
        #expect(try browser.eval("document.getElementById('banner').textContent")?.stringValue == "Exited Hayden Valley at 10:33")
        #expect(try browser.eval("document.querySelector('[data-device-id=\"sim-1\"]').style.display")?.stringValue == "none")

        let console = try browser.console()
        #expect(!console.contains { $0.hasPrefix("exception") }, "\(console)")
    }
}

// MARK: - Helpers

struct MapPageTestError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Where screenshots go: `.build/test-artifacts/` of the package.
enum MapPageArtifacts {
    static func path(_ name: String) -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = root.appendingPathComponent(".build/test-artifacts")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent(name).path
    }
}

/// Brute-force geometry in the lon/lat plane for the simulation tests.
enum MapPageGeometry {
    /// Distance in degrees from `p` to the segment `a`–`b` (planar).
    static func distanceToSegment(_ p: [Double], _ a: [Double], _ b: [Double]) -> Double {
        let dx = b[0] - a[0], dy = b[1] - a[1]
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? max(0, min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2)) : 0
        let x = a[0] + t * dx - p[0], y = a[1] + t * dy - p[1]
        return (x * x + y * y).squareRoot()
    }

    /// Lengths in metres (approximate) of the maximal stretches of the path inside the closed rectangle,
    /// clipping each segment (Liang–Barsky) and joining stretches that continue across a vertex.
    static func insideIntervals(_ path: [[Double]], rect: (west: Double, south: Double, east: Double, north: Double)) -> [Double] {
        var intervals: [Double] = []
        var open: Double? = nil
        for (a, b) in zip(path, path.dropFirst()) {
            var t0 = 0.0, t1 = 1.0
            let dx = b[0] - a[0], dy = b[1] - a[1]
            var empty = false
            for (p, q) in [(-dx, a[0] - rect.west), (dx, rect.east - a[0]), (-dy, a[1] - rect.south), (dy, rect.north - a[1])] {
                if p == 0 {
                    if q < 0 { empty = true }
                } else {
                    let r = q / p
                    if p < 0 { t0 = max(t0, r) } else { t1 = min(t1, r) }
                }
            }
            if empty || t0 > t1 {
                if let length = open { intervals.append(length) }
                open = nil
                continue
            }
            let start = [a[0] + t0 * dx, a[1] + t0 * dy], end = [a[0] + t1 * dx, a[1] + t1 * dy]
            let chord = metres(start, end)
            if t0 > 0, let length = open {
                intervals.append(length)
                open = nil
            }
            open = (open ?? 0) + chord
            if t1 < 1 {
                intervals.append(open ?? 0)
                open = nil
            }
        }
        if let length = open { intervals.append(length) }
        return intervals
    }

    static func metres(_ a: [Double], _ b: [Double]) -> Double {
        let d2r = Double.pi / 180
        let x = (b[0] - a[0]) * d2r * cos((a[1] + b[1]) / 2 * d2r), y = (b[1] - a[1]) * d2r
        return 6_371_008.8 * (x * x + y * y).squareRoot()
    }
}

/// Drives `scripts/browser-check.py --commands` (headless Chromium over CDP) from a test.
final class BrowserSession: @unchecked Sendable {
    static let python = "/usr/bin/python3"

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/browser-check.py").path
    }

    /// Whether chromium and python3-websocket are installed; prints why the browser test is skipped.
    static let isAvailable: Bool = {
        guard FileManager.default.isExecutableFile(atPath: python) else {
            print("note: MapPageBrowserTests skipped: \(python) is missing (run `make deps`: it installs python3-websocket and chromium)")
            return false
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, "--check"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        do { try process.run() } catch {
            print("note: MapPageBrowserTests skipped: cannot run \(script): \(error)")
            return false
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        if process.terminationStatus != 0 {
            print("note: MapPageBrowserTests skipped: \(text.trimmingCharacters(in: .whitespacesAndNewlines)) (run `make deps`: it installs them)")
            return false
        }
        return true
    }()

    let process = Process()
    let input = Pipe()
    let output = Pipe()
    var buffer: [UInt8] = []

    init() throws {
        process.executableURL = URL(fileURLWithPath: Self.python)
        process.arguments = [Self.script, "--commands"]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let hello = try readAnswer()
        guard hello["ok"]?.boolValue == true else {
            throw MapPageTestError("the browser did not start: \(hello["error"]?.stringValue ?? "\(hello)")")
        }
    }

    func readAnswer() throws -> JSONValue {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return try JSONParser().parse(line)
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { throw MapPageTestError("the browser driver exited") }
            buffer.append(contentsOf: data)
        }
    }

    @discardableResult
    func send(_ command: JSONValue) throws -> JSONValue? {
        input.fileHandleForWriting.write(Data((JSONWriter().string(command) + "\n").utf8))
        let answer = try readAnswer()
        guard answer["ok"]?.boolValue == true else {
            throw MapPageTestError("browser: \(answer["error"]?.stringValue ?? "\(answer)")")
        }
        return answer["value"]
    }

    func open(_ url: String) throws { try send(["cmd": "open", "url": .string(url)]) }

    func eval(_ expression: String) throws -> JSONValue? { try send(["cmd": "eval", "expr": .string(expression)]) }

    /// Waits in the browser for `expression` to be true. The blocking read runs off the concurrency
    /// pool (`offThePool`), which the other tests need meanwhile.
    func wait(_ expression: String, timeout: Double = 30) async throws {
        let command: JSONValue = ["cmd": "wait", "expr": .string(expression), "timeout": .double(timeout)]
        _ = try await offThePool { try self.send(command) }
    }

    func screenshot(_ path: String) throws { try send(["cmd": "screenshot", "path": .string(path)]) }

    func console() throws -> [String] {
        (try send(["cmd": "console"])?.arrayValue ?? []).compactMap(\.stringValue)
    }

    func quit() {
        _ = try? send(["cmd": "quit"])
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
