import Foundation

/// TLS settings of ``HTTPClientSession``: which CAs are trusted and, for mutual TLS, the client's
/// certificate and key. Verification of the peer (chain and host name) is always on.
///
/// Files are read and checked when the value is made, so a bad path or a file that is not PEM is
/// reported at start-up, naming the file, rather than at the first request.
public struct HTTPClientTLS: Hashable, Sendable {
    /// The PEM file of extra trusted CAs, if any.
    public let additionalCAFile: String?
    /// The PEM bytes libcurl is given as its CA store: the system's bundle followed by the extra CAs;
    /// `nil` without extra CAs (libcurl's default, the system store).
    public let caBundle: [UInt8]?
    /// The client certificate (PEM) presented for mutual TLS.
    public let clientCertificateFile: String?
    /// The client certificate's private key (PEM, unencrypted); `nil` when it is in the certificate file.
    public let clientKeyFile: String?

    /// The system's CA bundle, as Debian's libcurl is built to use it.
    public static let systemCABundlePath = "/etc/ssl/certs/ca-certificates.crt"

    /// The system's CAs only, no client certificate.
    public init() {
        additionalCAFile = nil
        caBundle = nil
        clientCertificateFile = nil
        clientKeyFile = nil
    }

    /// Checks and loads the settings.
    ///
    /// - Parameters:
    ///   - additionalCAFile: PEM certificates to trust besides the system's CAs.
    ///   - clientCertificateFile: PEM certificate for mutual TLS.
    ///   - clientKeyFile: its PEM private key (needed unless the certificate file holds the key too).
    ///   - systemCABundle: the system bundle to extend (tests may point elsewhere).
    /// - Throws: ``HTTPClientFailure/Kind/caCertificates`` or ``HTTPClientFailure/Kind/clientCertificate``
    ///   naming the file and what is wrong with it.
    public init(additionalCAFile: String?, clientCertificateFile: String?, clientKeyFile: String?,
                systemCABundle: String = HTTPClientTLS.systemCABundlePath) throws(HTTPClientFailure) {
        self.additionalCAFile = additionalCAFile
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
        if let additionalCAFile {
            let extra = try Self.read(additionalCAFile, what: "CA file", kind: .caCertificates)
            guard Self.contains(extra, "-----BEGIN CERTIFICATE-----") else {
                throw HTTPClientFailure(.caCertificates, "CA file \(additionalCAFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
            // The system store stays trusted: libcurl's CAINFO_BLOB replaces its default bundle, so the
            // blob is that bundle plus the extra CAs. A machine without the bundle trusts the extra CAs only.
            var bundle = (try? Self.read(systemCABundle, what: "system CA bundle", kind: .caCertificates)) ?? []
            if let last = bundle.last, last != 10 { bundle.append(10) }
            bundle += extra
            caBundle = bundle
        } else {
            caBundle = nil
        }
        if let clientCertificateFile {
            let certificate = try Self.read(clientCertificateFile, what: "client certificate", kind: .clientCertificate)
            guard Self.contains(certificate, "-----BEGIN CERTIFICATE-----") else {
                throw HTTPClientFailure(.clientCertificate, "client certificate \(clientCertificateFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
            if let clientKeyFile {
                let key = try Self.read(clientKeyFile, what: "client key", kind: .clientCertificate)
                guard Self.contains(key, "PRIVATE KEY-----") else {
                    throw HTTPClientFailure(.clientCertificate, "client key \(clientKeyFile) holds no PEM private key (-----BEGIN … PRIVATE KEY-----)")
                }
                guard !Self.contains(key, "ENCRYPTED") else {
                    throw HTTPClientFailure(.clientCertificate, "client key \(clientKeyFile) is encrypted; give an unencrypted key (protect the file instead)")
                }
            } else if !Self.contains(certificate, "PRIVATE KEY-----") {
                throw HTTPClientFailure(.clientCertificate, "client certificate \(clientCertificateFile) holds no private key: give the key file too")
            }
        } else if let clientKeyFile {
            throw HTTPClientFailure(.clientCertificate, "client key \(clientKeyFile) given without a client certificate")
        }
    }

    private static func read(_ path: String, what: String, kind: HTTPClientFailure.Kind) throws(HTTPClientFailure) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw HTTPClientFailure(kind, "\(what) \(path) \(reason)")
        }
        return [UInt8](data)
    }

    private static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        bytes.firstRange(of: Array(text.utf8)) != nil
    }
}
