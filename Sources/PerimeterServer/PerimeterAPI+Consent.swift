import PerimeterEngine
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterService

extension PerimeterAPI {
    /// `GET /v1/consent`: the service-wide consent, `{"granted": bool}`.
    func getServiceConsent() throws(Problem) -> HTTPResponse {
        do throws(GeofencingError) {
            return Self.json(["granted": .bool(try service.userConsent())])
        } catch {
            throw error.problem
        }
    }

    /// `PUT /v1/consent` with `{"granted": true|false}`: the service-wide consent (Mapbox's user
    /// consent). Without it no device's updates are processed; each device's own consent is kept.
    func putServiceConsent(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let granted = try Self.readGranted(request.body)
        do throws(GeofencingError) {
            try service.setUserConsent(granted)
        } catch {
            throw error.problem
        }
        return Self.json(["granted": .bool(granted)])
    }

    /// The `granted` member of a consent body.
    static func readGranted(_ body: [UInt8]) throws(Problem) -> Bool {
        guard case .object(let object) = try parseJSON(body) else {
            throw Problem.invalidField(JSONPath(), "the body must be an object like {\"granted\": true}")
        }
        guard case .bool(let granted)? = object["granted"] else {
            throw Problem.invalidField(JSONPath([.key("granted")]), "granted must be true or false")
        }
        return granted
    }
}
