import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterGeometry
import PerimeterService
import Testing
import PerimeterTestSupport
@testable import PerimeterWebhooks

private func event(_ kind: GeofenceEventKind, device: String = "d1", fence: String = "a") -> GeofenceEvent {
    GeofenceEvent(id: "0123456789abcdef0123456789abcdef", visitID: "fedcba9876543210fedcba9876543210", kind: kind,
                  fence: FenceID(fence), device: DeviceID(device), time: Date(timeIntervalSince1970: 1_700_000_000),
                  coordinate: Coordinate(latitude: 10.5, longitude: 20.25), timeInside: kind == .exit ? 120 : nil)
}

@Suite("Filters, JSON, CloudEvents, retry policy")
struct ModelTests {
    @Test func filterMatchesAgainstBruteForce() {
        var rng = SplitMix64(seed: 99)
        let devices = ["d1", "d2", "d3"], fences = ["a", "b", "c"], groups: [String?] = ["g1", "g2", nil]
        let kinds: [GeofenceEventKind] = [.entry, .dwell, .exit]
        for _ in 0..<300 {
            func subset<T: Hashable>(_ all: [T]) -> Set<T> { Set(all.filter { _ in Bool.random(using: &rng) }) }
            let filter = WebhookFilter(devices: subset(devices), fences: subset(fences),
                                       groups: subset(["g1", "g2"]), types: subset(kinds))
            let e = event(kinds.randomElement(using: &rng)!, device: devices.randomElement(using: &rng)!,
                          fence: fences.randomElement(using: &rng)!)
            let group = groups.randomElement(using: &rng)!
            let expected = (filter.devices.isEmpty || filter.devices.contains(e.device.rawValue))
                && (filter.fences.isEmpty || filter.fences.contains(e.fence.rawValue))
                && (filter.types.isEmpty || filter.types.contains(e.kind))
                && (filter.groups.isEmpty || group.map { filter.groups.contains($0) } == true)
            #expect(filter.matches(e, group: group) == expected)
        }
    }

    @Test func filterJSONRoundTripAndErrors() throws {
        let filter = WebhookFilter(devices: ["d2", "d1"], fences: ["a"], groups: [], types: [.exit, .entry])
        let json = WebhookJSON.filter(filter)
        #expect(JSONWriter().string(json) == #"{"devices":["d1","d2"],"fences":["a"],"types":["entry","exit"]}"#)
        #expect(try WebhookJSON.parseFilter(json) == filter)
        #expect(try WebhookJSON.parseFilter(nil) == WebhookFilter())
        #expect(try WebhookJSON.parseFilter(["device": "x", "type": "dwell"]) == WebhookFilter(devices: ["x"], types: [.dwell]))
        let bad: [(JSONValue, String)] = [
            ("x", "filter"), (["types": ["entry", "teleport"]], "filter.types"), (["devices": [1]], "filter.devices[0]"),
            (["colour": "red"], "filter.colour"), (["fences": "a"], "filter.fences"), (["group": ""], "filter.group"),
        ]
        for (value, field) in bad {
            do {
                _ = try WebhookJSON.parseFilter(value)
                Issue.record("accepted \(value)")
            } catch {
                #expect(error.code == .invalidArgument && error.field == field, "\(error)")
            }
        }
    }

    @Test func requestBodies() throws {
        let body = try JSONParser().parse(#"{"url":"http://h.test/x","filter":{"types":["dwell"]},"secret":"0123456789abcdef"}"#)
        #expect(try WebhookJSON.parseRegistrationRequest(body)
                == WebhookRegistrationRequest(url: "http://h.test/x", filter: WebhookFilter(types: [.dwell]), secret: "0123456789abcdef"))
        let bad: [(String, String)] = [
            (#"[]"#, ""), (#"{}"#, "url"), (#"{"url":3}"#, "url"), (#"{"url":"http://h/","secret":1}"#, "secret"),
            (#"{"url":"http://h/","id":[]}"#, "id"), (#"{"url":"http://h/","colour":1}"#, "colour"),
            (#"{"url":"http://h/","filter":{"types":["x"]}}"#, "filter.types"),
        ]
        for (text, field) in bad {
            let value = try JSONParser().parse(text)
            do {
                _ = try WebhookJSON.parseRegistrationRequest(value)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == .invalidArgument && error.field == field, "\(text): \(error)")
            }
        }
        #expect(try WebhookJSON.parseRedriveRequest(nil) == nil)
        #expect(try WebhookJSON.parseRedriveRequest(try JSONParser().parse("{}")) == nil)
        #expect(try WebhookJSON.parseRedriveRequest(try JSONParser().parse(#"{"sequences":[3,1]}"#)) == [3, 1])
        for (text, field) in [(#"{"sequences":[1,0]}"#, "sequences[1]"), (#"{"sequences":"all"}"#, "sequences"),
                              (#"{"seq":[1]}"#, "seq"), ("5", "")] {
            let value = try JSONParser().parse(text)
            do {
                _ = try WebhookJSON.parseRedriveRequest(value)
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.code == .invalidArgument && error.field == field, "\(text): \(error)")
            }
        }
        let registration = WebhookRegistration(id: "w", url: "http://h/", secret: "0123456789abcdef", createdAt: Date(timeIntervalSince1970: 0))
        #expect(JSONWriter().string(WebhookJSON.created(registration))
                == #"{"createdAt":"1970-01-01T00:00:00.000Z","filter":{},"id":"w","secret":"0123456789abcdef","url":"http://h/"}"#)
        #expect(!JSONWriter().string(WebhookJSON.registration(registration)).contains("secret"))
    }

    @Test func cloudEventBodyAndHeaders() throws {
        let fence = try #require(try makeService().fence(id: "a"))
        let logged = GeofencingEvent(sequence: 17, event: event(.exit), fence: fence)
        let encoder = CloudEventEncoder(source: "/perimeter/test")
        let body = encoder.body(for: logged)
        let value = try JSONParser().parse(body)
        // The envelope is what JSONWriter writes for it; `data` is the event's one JSON form.
        var envelope = try #require(value.objectValue)
        envelope["data"] = try JSONParser().parse(logged.json())
        #expect(String(decoding: body, as: UTF8.self) == JSONWriter().string(.object(envelope)))
        #expect(envelope.keys.sorted() == ["data", "datacontenttype", "id", "source", "specversion", "subject", "time", "type"])
        #expect(value["subject"] == "d1")
        #expect(value["specversion"] == "1.0")
        #expect(value["id"]?.stringValue == logged.event.id)
        #expect(value["type"] == "perimeter.geofence.exit")
        #expect(value["source"] == "/perimeter/test")
        #expect(value["datacontenttype"] == "application/json")
        #expect(value["time"] == "2023-11-14T22:13:20.000Z")
        let data = try #require(value["data"])
        #expect(data["sequence"]?.int64Value == 17)
        #expect(data["deviceId"] == "d1" && data["fenceId"] == "a" && data["type"] == "exit")
        #expect(data["timeInside"]?.doubleValue == 120 && data["reason"] == "left")
        #expect(data["fenceName"] == "Square a" && data["group"] == "north")
        #expect(data["properties"] == .object(fence.properties))
        let lean = try JSONParser().parse(CloudEventEncoder(source: "/perimeter/test", properties: false).body(for: logged))
        #expect(lean["data"]?["properties"] == nil && lean["data"]?["fenceName"] == "Square a")
        #expect(data["latitude"]?.doubleValue == 10.5 && data["longitude"]?.doubleValue == 20.25)
        let headers = Dictionary(uniqueKeysWithValues: encoder.headers(for: logged, body: body, webhookID: "wh_1",
                                                                       secret: "0123456789abcdef", now: Date(timeIntervalSince1970: 1_700_000_123.9)))
        #expect(headers["Content-Type"] == "application/cloudevents+json")
        #expect(headers["Idempotency-Key"] == logged.event.id)
        #expect(headers["Perimeter-Signature"]?.hasPrefix("t=1700000123,v1=") == true)
        #expect(WebhookSignature.verify(headerValue: headers["Perimeter-Signature"]!, body: body, secret: "0123456789abcdef",
                                        now: Date(timeIntervalSince1970: 1_700_000_124)))
        // Entry events have no reason or timeInside.
        let entry = try JSONParser().parse(encoder.body(for: GeofencingEvent(sequence: 1, event: event(.entry))))
        #expect(entry["data"]?["reason"] == nil && entry["data"]?["timeInside"] == nil && entry["data"]?["group"] == nil)
    }

    @Test func retryDelaysStayWithinTheirCapsAndAreSeeded() {
        let policy = WebhookRetryPolicy(initialDelay: 1, maximumDelay: 60, multiplier: 2, retention: 86_400)
        #expect(policy.cap(afterFailures: 1) == 1)
        #expect(policy.cap(afterFailures: 4) == 8)
        #expect(policy.cap(afterFailures: 7) == 60)
        #expect(policy.cap(afterFailures: 100_000) == 60)
        var a = SplitMix64(seed: 5), b = SplitMix64(seed: 5)
        var sum = 0.0
        for failures in 1...400 {
            let delay = policy.delay(afterFailures: failures, using: &a)
            let cap = min(60, pow(2, Double(failures - 1)))
            #expect(delay >= 0 && delay <= cap)
            #expect(delay == policy.delay(afterFailures: failures, using: &b))
            if failures > 10 { sum += delay }
        }
        // Full jitter: the mean of uniform [0, 60] draws is near 30 (390 samples; a very loose bound).
        #expect(abs(sum / 390 - 30) < 6)
        #expect(WebhookRetryPolicy(initialDelay: -1).validate() != nil)
        #expect(WebhookRetryPolicy(multiplier: 0.5).validate() != nil)
        #expect(WebhookRetryPolicy().validate() == nil)
    }
}
