internal import CNATS

/// A failure of the NATS client or of a JetStream request: what was being done, the client's status,
/// the JetStream error code when the server sent one, and the text that explains it.
///
/// ``reason`` sorts the failures callers act on — a stale writer (``Reason/wrongLastSequence``), a
/// missing key, stream or message, a timeout — from the rest.
public struct NATSError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The operation that failed, e.g. `publish to perimeter.events.3`.
    public var operation: String
    /// The client's status code (libnats' `natsStatus`; 0 is success and never appears here).
    public var status: Int32
    /// The status' name as the client spells it, e.g. `Timeout`.
    public var statusText: String
    /// The JetStream error code the server answered with (e.g. 10071, wrong last sequence); 0 when the
    /// failure did not come from JetStream.
    public var jetStreamCode: Int
    /// The most specific text available: the server's description or the client's last error.
    public var text: String

    /// What a caller can do about a failure.
    public enum Reason: Equatable, Sendable {
        /// The server refused a publish whose expected last (subject) sequence did not match — another
        /// writer got there first (JetStream error 10071). A key-value create of a key that exists and a
        /// compare-and-set update with a stale revision fail this way too.
        case wrongLastSequence
        /// The stream, consumer, key or message does not exist.
        case notFound
        /// No answer in time.
        case timeout
        /// No server could be reached, or the connection is closed.
        case unreachable
        /// Anything else: see ``NATSError/status``, ``NATSError/jetStreamCode`` and ``NATSError/text``.
        case other
    }

    /// Creates an error from its parts (the module makes them from the client's answers).
    public init(operation: String, status: Int32, statusText: String, jetStreamCode: Int, text: String) {
        self.operation = operation
        self.status = status
        self.statusText = statusText
        self.jetStreamCode = jetStreamCode
        self.text = text
    }

    /// A timeout of `operation` that happened above the client (a wait of Perimeter's own).
    public static func timeout(_ operation: String, _ text: String) -> NATSError {
        NATSError(operation: operation, status: Int32(bitPattern: NATS_TIMEOUT.rawValue), statusText: "Timeout",
                  jetStreamCode: 0, text: text)
    }

    /// The JetStream code of a stale expected sequence (`JSStreamWrongLastSequenceErr`).
    public static let wrongLastSequenceCode = 10071

    /// What a caller can do about it.
    public var reason: Reason {
        switch jetStreamCode {
        case NATSError.wrongLastSequenceCode: return .wrongLastSequence
        case 10014, 10037, 10059: return .notFound   // consumer, no message found, stream
        default: break
        }
        switch natsStatus(UInt32(bitPattern: status)) {
        case NATS_NOT_FOUND: return .notFound
        case NATS_TIMEOUT: return .timeout
        case NATS_NO_SERVER, NATS_CONNECTION_CLOSED, NATS_NO_RESPONDERS: return .unreachable
        default: return .other
        }
    }

    /// Whether trying again later may succeed: no answer in time, no server reachable or no responder
    /// (a server still starting), or a JetStream cluster that answered it cannot serve the request now —
    /// `JetStream system temporarily unavailable` (10008) and `JetStream cluster can not handle request`
    /// (10009), what a cluster says while it elects its leaders.
    public var isTemporary: Bool {
        switch reason {
        case .timeout, .unreachable: return true
        case .wrongLastSequence, .notFound: return false
        case .other: return jetStreamCode == 10008 || jetStreamCode == 10009
        }
    }

    public var description: String {
        var line = "NATS: \(operation) failed: \(statusText)"
        if jetStreamCode != 0 { line += " (JetStream error \(jetStreamCode))" }
        if !text.isEmpty && text != statusText { line += ": \(text)" }
        return line
    }

    /// The error for a failed call: `status` as returned, the JetStream code if the call reported one,
    /// and the text of the client's last error on this thread (read at once, before another call) when
    /// it is about this status — the client keeps an older failure's text until a new one replaces it.
    static func failed(_ operation: @autoclosure () -> String, _ status: natsStatus, code: jsErrCode = jsErrCode(0)) -> NATSError {
        var lastStatus = NATS_OK
        let lastText = nats_GetLastError(&lastStatus).map { String(cString: $0) } ?? ""
        let last = lastStatus == status ? lastText : ""
        let statusText = natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
        return NATSError(operation: operation(), status: Int32(bitPattern: status.rawValue), statusText: statusText,
                         jetStreamCode: Int(code.rawValue), text: last.isEmpty ? statusText : last)
    }

    /// Throws ``failed(_:_:code:)`` unless `status` is `NATS_OK`.
    static func check(_ status: natsStatus, _ operation: @autoclosure () -> String, code: jsErrCode = jsErrCode(0)) throws(NATSError) {
        if status != NATS_OK { throw failed(operation(), status, code: code) }
    }
}
