import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import Testing

/// Inputs that once crashed the server, found by fuzzing or by the OpenAPI conformance run
/// (docs/reliability.md, "Fuzzing"): each must now get a clear answer.
@Suite("Fuzz regressions")
struct FuzzRegressionTests {
    /// An update dated far in the future was refused with a message whose duration ("… years ahead")
    /// converted 1e292 years to an Int and trapped. Found by SchemathesisTests (POST /v1/locations).
    @Test(arguments: ["1e300", "-1e300", "1.7976931348623157e308", "9.3e18"])
    func updateDatedFarInTheFutureIsRefused(time: String) throws {
        let api = try T.api()
        let response = T.call(api, "POST", "/v1/locations",
                              body: #"{"deviceId":"a","latitude":1,"longitude":2,"time":\#(time)}"#)
        #expect(response.status == 422 || response.status == 200, "\(response.status)")
        if response.status == 422 {
            #expect(T.parse(response)["detail"]?.stringValue?.isEmpty == false)
        }
    }
}
