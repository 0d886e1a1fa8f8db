import Foundation
internal import CCurl

/// An HTTP/1.1 client connection on libcurl, for `http://` and `https://` POSTs to one receiver after
/// another: one curl easy handle whose connection cache keeps connections alive between requests.
///
/// Built for callers that check where a request may go (the webhook SSRF guard): the caller resolves
/// the host and passes the addresses it accepted; libcurl connects only to those (`CURLOPT_RESOLVE`,
/// no lookup of its own), follows no redirects, uses no proxy (environment variables included) and
/// speaks only HTTP and HTTPS. TLS peers are verified (chain and host name) against the system's CAs
/// plus ``HTTPClientTLS/additionalCAFile``.
///
/// Not thread-safe: one thread at a time (a pool may hand it from thread to thread), hence
/// `@unchecked Sendable`.
///
/// ```swift
/// let session = try HTTPClientSession(configuration: HTTPClientConfiguration())
/// let response = try session.post(url: "https://hooks.example.com/geo", host: "hooks.example.com",
///                                 port: 443, addresses: ["93.184.216.34"], headers: [], body: body)
/// ```
public final class HTTPClientSession: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer
    private let errorBuffer: UnsafeMutablePointer<CChar>
    /// The configuration it was made with.
    public let configuration: HTTPClientConfiguration

    /// libcurl's process-wide initialisation, done once before the first handle (thread-safe lazy init).
    private static let globalInit: CURLcode = curl_global_init(perimeter_curl_global_default())

    /// Creates a session; no connection is made until the first request.
    /// - Throws: ``HTTPClientFailure/Kind/local`` when libcurl cannot be set up, or the TLS kinds when
    ///   libcurl refuses the CA bundle or client certificate settings.
    public init(configuration: HTTPClientConfiguration) throws(HTTPClientFailure) {
        guard Self.globalInit == CURLE_OK else {
            throw HTTPClientFailure(.local, "libcurl cannot be initialised: \(String(cString: curl_easy_strerror(Self.globalInit)))")
        }
        guard let handle = curl_easy_init() else { throw HTTPClientFailure(.local, "libcurl cannot create a handle") }
        self.handle = handle
        self.configuration = configuration
        let size = perimeter_curl_error_size()
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
        do {
            try setUp()
        } catch {
            curl_easy_cleanup(handle)
            errorBuffer.deallocate()
            throw error
        }
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    private func setUp() throws(HTTPClientFailure) {
        func check(_ code: CURLcode, _ what: String, _ kind: HTTPClientFailure.Kind = .local) throws(HTTPClientFailure) {
            guard code == CURLE_OK else {
                throw HTTPClientFailure(kind, "libcurl refused \(what): \(String(cString: curl_easy_strerror(code)))")
            }
        }
        let c = configuration
        try check(perimeter_curl_set_long(handle, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        try check(perimeter_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer), "ERRORBUFFER")
        try check(perimeter_curl_discard_body(handle), "WRITEFUNCTION")
        try check(perimeter_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(c.connectTimeout)), "CONNECTTIMEOUT_MS")
        try check(perimeter_curl_set_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(c.timeout)), "TIMEOUT_MS")
        try check(perimeter_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"), "PROTOCOLS_STR")
        try check(perimeter_curl_set_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "REDIR_PROTOCOLS_STR")
        try check(perimeter_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
        // An empty proxy disables proxies, the http_proxy/https_proxy/all_proxy variables included: a
        // proxy would make its own DNS lookup and undo the caller's address check.
        try check(perimeter_curl_set_string(handle, CURLOPT_PROXY, ""), "PROXY")
        try check(perimeter_curl_set_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1), "HTTP_VERSION")
        try check(perimeter_curl_set_long(handle, CURLOPT_POST, 1), "POST")
        try check(perimeter_curl_set_string(handle, CURLOPT_USERAGENT, c.userAgent), "USERAGENT")
        try check(perimeter_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1), "SSL_VERIFYPEER")
        try check(perimeter_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2), "SSL_VERIFYHOST")
        if let bundle = c.tls.caBundle {
            let code = bundle.withUnsafeBytes { perimeter_curl_set_blob_copy(handle, CURLOPT_CAINFO_BLOB, $0.baseAddress, $0.count) }
            try check(code, "the CA bundle", .caCertificates)
        }
        if let certificate = c.tls.clientCertificateFile {
            try check(perimeter_curl_set_string(handle, CURLOPT_SSLCERT, certificate), "the client certificate", .clientCertificate)
            try check(perimeter_curl_set_string(handle, CURLOPT_SSLCERTTYPE, "PEM"), "SSLCERTTYPE", .clientCertificate)
            if let key = c.tls.clientKeyFile {
                try check(perimeter_curl_set_string(handle, CURLOPT_SSLKEY, key), "the client key", .clientCertificate)
            }
        }
    }

    /// POSTs `body` to `url` and returns the response's status; reads and discards the response body
    /// so that the connection stays reusable.
    ///
    /// - Parameters:
    ///   - url: `http://` or `https://` URL; its host and port must be `host` and `port`.
    ///   - host: the URL's host (a name, or an address literal, IPv6 without brackets).
    ///   - port: the URL's port.
    ///   - addresses: the addresses (textual IPv4 or IPv6) libcurl may connect to for `host`; ignored
    ///     when `host` is itself an address literal. Never empty for a name.
    ///   - headers: extra header fields (no line breaks; checked by the caller).
    /// - Throws: ``HTTPClientFailure`` saying what failed and why.
    public func post(url: String, host: String, port: UInt16, addresses: [String], headers: [(String, String)],
                     body: [UInt8]) throws(HTTPClientFailure) -> HTTPClientResponse {
        var headerList: UnsafeMutablePointer<curl_slist>?
        var resolveList: UnsafeMutablePointer<curl_slist>?
        defer {
            // libcurl keeps the lists' and the body's pointers: clear them before the memory goes.
            _ = perimeter_curl_set_list(handle, CURLOPT_HTTPHEADER, nil)
            _ = perimeter_curl_set_list(handle, CURLOPT_RESOLVE, nil)
            _ = perimeter_curl_set_pointer(handle, CURLOPT_POSTFIELDS, nil)
            curl_slist_free_all(headerList)
            curl_slist_free_all(resolveList)
        }
        // "Expect:" and "Accept:" with no value remove libcurl's defaults: no 100-continue round trip.
        for line in headers.map({ "\($0.0): \($0.1)" }) + ["Expect:", "Accept:"] {
            guard let appended = curl_slist_append(headerList, line) else { throw HTTPClientFailure(.local, "out of memory") }
            headerList = appended
        }
        if !Self.isAddressLiteral(host) {
            guard !addresses.isEmpty else { throw HTTPClientFailure(.local, "no address given for \(host)") }
            let list = addresses.map { $0.contains(":") ? "[\($0)]" : $0 }.joined(separator: ",")
            // Drop what an earlier request pinned for this host and port, then pin this request's addresses.
            for entry in ["-\(host):\(port)", "\(host):\(port):\(list)"] {
                guard let appended = curl_slist_append(resolveList, entry) else { throw HTTPClientFailure(.local, "out of memory") }
                resolveList = appended
            }
        }
        errorBuffer[0] = 0
        var code = perimeter_curl_set_string(handle, CURLOPT_URL, url)
        if code == CURLE_OK { code = perimeter_curl_set_list(handle, CURLOPT_HTTPHEADER, headerList) }
        if code == CURLE_OK { code = perimeter_curl_set_list(handle, CURLOPT_RESOLVE, resolveList) }
        guard code == CURLE_OK else { throw HTTPClientFailure(.local, "libcurl refused the request to \(url): \(message(code))") }
        let storage = body.isEmpty ? [0] : body
        code = storage.withUnsafeBytes { raw -> CURLcode in
            var result = perimeter_curl_set_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress))
            if result == CURLE_OK { result = perimeter_curl_set_post_size(handle, body.count) }
            if result == CURLE_OK { result = curl_easy_perform(handle) }
            return result
        }
        guard code == CURLE_OK else { throw failure(code) }
        var status = 0
        var connects = 0
        _ = perimeter_curl_get_long(handle, CURLINFO_RESPONSE_CODE, &status)
        _ = perimeter_curl_get_long(handle, CURLINFO_NUM_CONNECTS, &connects)
        return HTTPClientResponse(status: status, reusedConnection: connects == 0)
    }

    /// libcurl's error buffer, or the generic text of `code` when the buffer is empty.
    private func message(_ code: CURLcode) -> String {
        let buffer = String(cString: errorBuffer).trimmingCharacters(in: .whitespacesAndNewlines)
        return buffer.isEmpty ? String(cString: curl_easy_strerror(code)) : buffer
    }

    /// Classifies a failed transfer.
    private func failure(_ code: CURLcode) -> HTTPClientFailure {
        let detail = message(code)
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION:
            var verify = 0
            _ = perimeter_curl_get_long(handle, CURLINFO_SSL_VERIFYRESULT, &verify)
            return HTTPClientFailure(Self.certificateKind(verifyResult: verify, detail: detail), detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_ENGINE_NOTFOUND,
             CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_ISSUER_ERROR:
            // A peer that wants a client certificate aborts the handshake with an alert, reported here.
            return HTTPClientFailure(.tlsHandshakeFailed, detail)
        case CURLE_SSL_CERTPROBLEM:
            return HTTPClientFailure(.clientCertificate, detail)
        case CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CRL_BADFILE:
            return HTTPClientFailure(.caCertificates, detail)
        case CURLE_OPERATION_TIMEDOUT:
            return HTTPClientFailure(.timeout, detail)
        case CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST:
            return HTTPClientFailure(.connectFailed, detail)
        case CURLE_GOT_NOTHING:
            return HTTPClientFailure(.emptyResponse, detail)
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_PARTIAL_FILE:
            // With TLS 1.3 a refused client certificate shows up as an alert at the first read.
            let lower = detail.lowercased()
            if lower.contains("alert") || lower.contains("ssl") || lower.contains("tls") {
                return HTTPClientFailure(.tlsHandshakeFailed, detail)
            }
            return HTTPClientFailure(.connectionBroken, detail)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_UNSUPPORTED_PROTOCOL, CURLE_HTTP2, CURLE_HTTP2_STREAM,
             CURLE_BAD_CONTENT_ENCODING:
            return HTTPClientFailure(.malformedResponse, detail)
        default:
            return HTTPClientFailure(.local, detail)
        }
    }

    /// The kind of a certificate verification failure from libcurl's message and OpenSSL's verify
    /// result (X509_V_ERR_*, stable numbers of OpenSSL's ABI). libcurl checks the host name itself, after
    /// OpenSSL accepted the chain, and says so only in its message.
    static func certificateKind(verifyResult: Int, detail: String) -> HTTPClientFailure.Kind {
        let lower = detail.lowercased()
        if lower.contains("subject name") || lower.contains("does not match") || lower.contains("hostname mismatch") {
            return .certificateNameMismatch
        }
        switch verifyResult {
        case 2, 18, 19, 20, 21, 27, 28: return .certificateNotTrusted   // no issuer, self-signed, untrusted, rejected
        case 9, 13: return .certificateNotYetValid                   // notBefore in the future (or unreadable)
        case 10, 14: return .certificateExpired                      // notAfter in the past (or unreadable)
        case 62, 64: return .certificateNameMismatch                 // host name or IP address mismatch
        default: return .certificateInvalid
        }
    }

    private static func milliseconds(_ seconds: Double) -> Int {
        Int(min(max(seconds * 1000, 1), Double(Int32.max)).rounded(.up))
    }

    /// Whether `host` is an IPv4 or IPv6 address literal (libcurl looks nothing up for those).
    static func isAddressLiteral(_ host: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(AF_INET, host, &buffer) == 1 || inet_pton(AF_INET6, host, &buffer) == 1
    }
}

/// What ``HTTPClientSession/post(url:host:port:addresses:headers:body:)`` learnt.
public struct HTTPClientResponse: Hashable, Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Whether the request went over a connection kept alive from an earlier request.
    public var reusedConnection: Bool

    /// Creates a response.
    public init(status: Int, reusedConnection: Bool) {
        self.status = status
        self.reusedConnection = reusedConnection
    }
}

/// Timeouts, identity and TLS settings of an ``HTTPClientSession``.
public struct HTTPClientConfiguration: Hashable, Sendable {
    /// How long connecting, TLS handshake included, may take, in seconds.
    public var connectTimeout: Double
    /// How long a whole request may take, connecting included, in seconds.
    public var timeout: Double
    /// The `User-Agent` header.
    public var userAgent: String
    /// Trusted CAs and the client certificate.
    public var tls: HTTPClientTLS

    /// Creates a configuration (defaults: 5 s to connect, 10 s per request, the system CAs only).
    public init(connectTimeout: Double = 5, timeout: Double = 10, userAgent: String = "Perimeter",
                tls: HTTPClientTLS = HTTPClientTLS()) {
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.userAgent = userAgent
        self.tls = tls
    }
}
