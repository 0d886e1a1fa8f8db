import PerimeterEngine
import PerimeterFences
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `GET /v1/devices/{id}`: the fences the device is inside, since when, whether dwell fired; 404 for
    /// a device never seen.
    func getDevice(_ id: String) throws(Problem) -> HTTPResponse {
        let status: DeviceStatus
        do throws(GeofencingError) {
            status = try service.deviceStatus(of: DeviceID(id))
        } catch {
            throw error.problem
        }
        guard let last = status.lastUpdateTime else {
            throw Problem.notFound("no update was ever accepted for device \"\(id)\"")
        }
        let inside: [JSONValue] = status.presence.map { presence in
            var item: [String: JSONValue] = [
                "fenceId": .string(presence.fence.rawValue),
                "since": .string(RFC3339.string(from: presence.since)),
                "visitId": .string(presence.visitID),
                "dwellFired": .bool(presence.hasDwelled),
            ]
            if let name = ((try? service.fence(id: presence.fence)) ?? nil)?.name { item["fenceName"] = .string(name) }
            return .object(item)
        }
        return Self.json(["deviceId": .string(id), "lastUpdateTime": .string(RFC3339.string(from: last)),
                          "consent": .bool(status.isConsentGiven), "inside": .array(inside)])
    }

    /// `PUT /v1/devices/{id}/consent` with `{"granted": true|false}`.
    func putConsent(_ id: String, _ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let granted = try Self.readGranted(request.body)
        do throws(GeofencingError) {
            try service.setUserConsent(granted, for: DeviceID(id))
        } catch {
            throw error.problem
        }
        return Self.json(["deviceId": .string(id), "granted": .bool(granted)])
    }
}
