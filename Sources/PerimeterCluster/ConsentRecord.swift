import Foundation
import PerimeterEngine
import PerimeterNATS

/// Consent as the cluster's `consent` bucket stores it (docs/cluster.md, "The API node"): one key for
/// the service-wide consent, ``serviceKey``, and one per device that was given or refused consent
/// explicitly, `device.<token>` with the device id encoded as one subject token
/// (``PerimeterNATS/SubjectToken/encode(_:)``, so every id round-trips); the value is
/// `{"granted":true}` or `{"granted":false}`, as the API's consent bodies.
public enum ConsentRecord {
    /// Whose consent a key holds.
    public enum Owner: Sendable, Hashable {
        /// The service-wide consent.
        case service
        /// One device's consent.
        case device(DeviceID)
    }

    /// The key of the service-wide consent.
    public static let serviceKey = "service"
    /// What every device key starts with.
    static let devicePrefix = "device."

    /// The key of `device`'s consent, or of the service-wide consent when `nil`.
    public static func key(of device: DeviceID?) -> String {
        guard let device else { return serviceKey }
        return devicePrefix + SubjectToken.encode(device.rawValue)
    }

    /// Whose consent `key` holds, or `nil` for a key that is neither ``serviceKey`` nor a device key.
    public static func owner(ofKey key: String) -> Owner? {
        if key == serviceKey { return .service }
        guard key.hasPrefix(devicePrefix), let id = SubjectToken.decode(String(key.dropFirst(devicePrefix.count))) else {
            return nil
        }
        return .device(DeviceID(id))
    }

    /// The value stored for consent given (`true`) or refused.
    public static func value(_ isConsentGiven: Bool) -> [UInt8] {
        Array((try? JSONEncoder().encode(Wire(granted: isConsentGiven))) ?? Data())
    }

    /// The consent a stored value says, or `nil` when it is not a consent value.
    public static func isConsentGiven(_ value: [UInt8]) -> Bool? {
        (try? JSONDecoder().decode(Wire.self, from: Data(value)))?.granted
    }

    private struct Wire: Codable {
        var granted: Bool
    }
}
