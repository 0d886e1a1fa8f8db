internal import CNATS
import Foundation

/// A JetStream stream: its name, the subjects it stores, and how.
public struct StreamConfiguration: Sendable, Equatable {
    /// Where a stream keeps its messages.
    public enum Storage: Sendable, Equatable {
        /// On disk, in the server's store directory (survives a restart).
        case file
        /// In memory only.
        case memory
    }

    /// The stream's name (no `.`, `*`, `>` or spaces).
    public var name: String
    /// The subjects it stores (wildcards allowed), e.g. `["perimeter.updates.*"]`.
    public var subjects: [String]
    /// How many servers keep a copy: 1, or 3 for a cluster that survives one server's loss.
    public var replicas: Int
    /// Where the copies live.
    public var storage: Storage
    /// How long the stream remembers message ids to drop a second copy
    /// (``PublishOptions/messageID``); JetStream's default is 2 minutes.
    public var duplicateWindow: Duration
    /// How long a message is kept; `nil`: until other limits remove it. JetStream refuses a duplicate
    /// window longer than the maximum age.
    public var maxAge: Duration?
    /// The most bytes the stream holds (the oldest messages are removed to stay below); `nil`: no limit.
    public var maxBytes: Int64?
    /// The most messages the stream holds (the oldest are removed to stay below); `nil`: no limit.
    public var maxMessages: Int64?

    /// A stream of `subjects` named `name`, one file-stored replica, a 2-minute duplicate window, no limits.
    public init(name: String, subjects: [String], replicas: Int = 1, storage: Storage = .file,
                duplicateWindow: Duration = .seconds(120), maxAge: Duration? = nil, maxBytes: Int64? = nil,
                maxMessages: Int64? = nil) {
        self.name = name
        self.subjects = subjects
        self.replicas = replicas
        self.storage = storage
        self.duplicateWindow = duplicateWindow
        self.maxAge = maxAge
        self.maxBytes = maxBytes
        self.maxMessages = maxMessages
    }

    /// The configuration a server reported (stream info).
    init(_ config: jsStreamConfig) {
        let subjects = config.Subjects.map { list in
            (0..<Int(config.SubjectsLen)).compactMap { list[$0].map { String(cString: $0) } }
        } ?? []
        self.init(name: config.Name.map { String(cString: $0) } ?? "", subjects: subjects, replicas: Int(config.Replicas),
                  storage: config.Storage == js_MemoryStorage ? .memory : .file,
                  duplicateWindow: .nanoseconds(config.Duplicates),
                  maxAge: config.MaxAge > 0 ? .nanoseconds(config.MaxAge) : nil,
                  maxBytes: config.MaxBytes > 0 ? config.MaxBytes : nil,
                  maxMessages: config.MaxMsgs > 0 ? config.MaxMsgs : nil)
    }

    /// Calls `body` with the C configuration (valid during the call).
    func withC<R>(_ body: (UnsafeMutablePointer<jsStreamConfig>) throws(NATSError) -> R) throws(NATSError) -> R {
        var config = jsStreamConfig()
        try NATSError.check(jsStreamConfig_Init(&config), "stream configuration")
        return try withOptionalCString(name) { (cName) throws(NATSError) -> R in
            try withCStrings(subjects) { (cSubjects, count) throws(NATSError) -> R in
                config.Name = cName
                config.Subjects = cSubjects
                config.SubjectsLen = Int32(count)
                config.Replicas = Int64(replicas)
                config.Storage = storage == .file ? js_FileStorage : js_MemoryStorage
                config.Duplicates = duplicateWindow.nanoseconds
                config.MaxAge = maxAge?.nanoseconds ?? 0
                // -1 is JetStream's "no limit" for both.
                config.MaxBytes = maxBytes ?? -1
                config.MaxMsgs = maxMessages ?? -1
                return try body(&config)
            }
        }
    }
}

/// A stream's contents at one moment.
public struct StreamState: Sendable, Equatable {
    /// How many messages it holds.
    public var messages: UInt64
    /// The sequence of the oldest message it holds (0 when it never held one).
    public var firstSequence: UInt64
    /// The sequence of the newest message stored (0 when none was ever stored).
    public var lastSequence: UInt64
    /// How many consumers read it now.
    public var consumers: Int

    init(_ state: jsStreamState) {
        messages = state.Msgs
        firstSequence = state.FirstSeq
        lastSequence = state.LastSeq
        consumers = Int(state.Consumers)
    }
}

/// What a publisher asks of JetStream besides storing the message.
public struct PublishOptions: Sendable, Equatable {
    /// The message's id (header `Nats-Msg-Id`): a second message with the same id within the stream's
    /// duplicate window is acknowledged as a duplicate and not stored. Perimeter uses event ids.
    public var messageID: String?
    /// Store only if the last message on this subject has this sequence (0: only if there is none):
    /// a writer that lost its turn fails with ``NATSError/Reason/wrongLastSequence`` instead of
    /// writing after someone else.
    public var expectedLastSubjectSequence: UInt64?
    /// Store only if the subject belongs to this stream.
    public var expectedStream: String?

    /// Options with the given parts (all optional).
    public init(messageID: String? = nil, expectedLastSubjectSequence: UInt64? = nil, expectedStream: String? = nil) {
        self.messageID = messageID
        self.expectedLastSubjectSequence = expectedLastSubjectSequence
        self.expectedStream = expectedStream
    }

    /// Calls `body` with the C options (valid during the call).
    func withC<R, E: Error>(_ body: (UnsafeMutablePointer<jsPubOptions>) throws(E) -> R) throws(E) -> R {
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        switch expectedLastSubjectSequence {
        case .none: break
        case .some(0): options.ExpectNoMessage = true
        case .some(let sequence): options.ExpectLastSubjectSeq = sequence
        }
        return try withOptionalCString(messageID) { (id) throws(E) -> R in
            try withOptionalCString(expectedStream) { (stream) throws(E) -> R in
                options.MsgId = id
                options.ExpectStream = stream
                return try body(&options)
            }
        }
    }
}

/// The stream's answer to a stored (or recognised duplicate) message.
public struct PublishAck: Sendable, Equatable {
    /// The stream that stored it.
    public var stream: String
    /// Its sequence in the stream (for a duplicate: the first copy's).
    public var sequence: UInt64
    /// Whether its message id was seen within the duplicate window, so this copy was not stored.
    public var duplicate: Bool

    /// An acknowledgement with these parts.
    public init(stream: String, sequence: UInt64, duplicate: Bool) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
    }

    init(_ ack: jsPubAck) {
        stream = ack.Stream.map { String(cString: $0) } ?? ""
        sequence = ack.Sequence
        duplicate = ack.Duplicate
    }
}

/// One message of a batch to publish.
public struct OutgoingMessage: Sendable, Equatable {
    /// Where it goes.
    public var subject: String
    /// Its bytes.
    public var payload: [UInt8]
    /// Its message id and expectations.
    public var options: PublishOptions

    /// A message to `subject`.
    public init(subject: String, payload: [UInt8], options: PublishOptions = PublishOptions()) {
        self.subject = subject
        self.payload = payload
        self.options = options
    }
}

/// A message as a stream stored it.
public struct StreamMessage: Sendable, Equatable {
    /// Its subject.
    public var subject: String
    /// Its bytes.
    public var payload: [UInt8]
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// Its message id (`Nats-Msg-Id`), when it was published with one.
    public var messageID: String?
    /// When the stream stored it, in nanoseconds since 1970 (UTC); 0 when unknown.
    public var storedAtNanoseconds: Int64
    /// The key-value operation header (`KV-Operation`: `DEL`, `PURGE`), for messages of a bucket's stream.
    var keyValueOperation: String?

    /// A message with these parts.
    public init(subject: String, payload: [UInt8], sequence: UInt64, messageID: String?, storedAtNanoseconds: Int64) {
        self.subject = subject
        self.payload = payload
        self.sequence = sequence
        self.messageID = messageID
        self.storedAtNanoseconds = storedAtNanoseconds
    }

    /// A message read with js_GetMsg / js_GetLastMsg (sequence and time in the message itself).
    init(stored message: OpaquePointer) {
        self.init(message: message, sequence: natsMsg_GetSequence(message), time: natsMsg_GetTime(message))
    }

    init(message: OpaquePointer, sequence: UInt64, time: Int64) {
        subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
        let count = Int(natsMsg_GetDataLength(message))
        if count > 0, let data = natsMsg_GetData(message) {
            payload = data.withMemoryRebound(to: UInt8.self, capacity: count) { Array(UnsafeBufferPointer(start: $0, count: count)) }
        } else {
            payload = []
        }
        self.sequence = sequence
        messageID = perimeter_nats_msg_header(message, "Nats-Msg-Id").map { String(cString: $0) }
        keyValueOperation = perimeter_nats_msg_header(message, "KV-Operation").map { String(cString: $0) }
        storedAtNanoseconds = time
    }
}

/// Calls `body` with a C copy of `text`, or NULL.
func withOptionalCString<R, E: Error>(_ text: String?, _ body: (UnsafePointer<CChar>?) throws(E) -> R) throws(E) -> R {
    guard let text else { return try body(nil) }
    let copy = strdup(text)
    defer { free(copy) }
    return try body(copy)
}
