internal import CNATS
import Foundation

/// JetStream over one ``NATSConnection``: streams, publishing with de-duplication and expected
/// sequences (one at a time, or a batch in flight at once), pull consumers and key-value buckets.
///
/// Thread-safe. Asynchronous batches (``publishBatch(_:timeout:)``) on one context run one at a time:
/// publish from several threads at once through one context each.
public final class JetStream: @unchecked Sendable {
    /// The connection the context uses (kept alive as long as the context).
    public let connection: NATSConnection
    let context: OpaquePointer
    /// How long JetStream API requests (stream and consumer management, key-value operations, a
    /// synchronous publish) wait for the server.
    public let requestTimeout: Duration
    private let acknowledgements = AsyncAcknowledgements()
    private let batchLock = NSLock()

    /// A JetStream context on `connection`.
    public init(_ connection: NATSConnection, requestTimeout: Duration = .seconds(5)) throws(NATSError) {
        self.connection = connection
        self.requestTimeout = requestTimeout
        var options = jsOptions()
        try NATSError.check(jsOptions_Init(&options), "JetStream: options")
        options.Wait = requestTimeout.milliseconds
        options.PublishAsync.AckHandler = JetStream.acknowledged
        options.PublishAsync.AckHandlerClosure = Unmanaged.passUnretained(acknowledgements).toOpaque()
        var context: OpaquePointer?
        try NATSError.check(natsConnection_JetStream(&context, connection.handle, &options), "JetStream: context")
        self.context = context!
    }

    deinit { jsCtx_Destroy(context) }

    // MARK: Streams

    /// Creates `configuration`'s stream, or checks that an identical one exists (JetStream answers an
    /// identical configuration with the existing stream, and a different one with error 10058).
    @discardableResult
    public func addStream(_ configuration: StreamConfiguration) throws(NATSError) -> StreamState {
        try configuration.withC { (config) throws(NATSError) -> StreamState in
            try streamInfo("add stream \(configuration.name)") { js_AddStream($0, context, config, nil, $1) } read: { StreamState($0.State) }
        }
    }

    /// Replaces an existing stream's configuration with `configuration` (JetStream allows changing its
    /// limits, duplicate window and subjects, not its name or storage).
    @discardableResult
    public func updateStream(_ configuration: StreamConfiguration) throws(NATSError) -> StreamState {
        try configuration.withC { (config) throws(NATSError) -> StreamState in
            try streamInfo("update stream \(configuration.name)") { js_UpdateStream($0, context, config, nil, $1) } read: { StreamState($0.State) }
        }
    }

    /// The configuration the stream has on the server now.
    public func streamConfiguration(_ name: String) throws(NATSError) -> StreamConfiguration {
        try streamInfo("stream info \(name)") { js_GetStreamInfo($0, context, name, nil, $1) } read: { (info) throws(NATSError) in
            guard let config = info.Config?.pointee else {
                throw NATSError(operation: "stream info \(name)", status: 1, statusText: "Error", jetStreamCode: 0,
                                text: "the answer holds no configuration")
            }
            return StreamConfiguration(config)
        }
    }

    /// The stream's message count and sequences now.
    public func streamState(_ name: String) throws(NATSError) -> StreamState {
        try streamInfo("stream info \(name)") { js_GetStreamInfo($0, context, name, nil, $1) } read: { StreamState($0.State) }
    }

    /// The subjects of `stream` that match `filter` (wildcards allowed) and hold messages now, with how
    /// many each holds. One request, answered by the stream's leader: unlike listing keys through a
    /// consumer, it creates nothing on the cluster, so it does not depend on which servers are up beyond
    /// the stream's leader (docs/cluster.md, "Recovery after a NATS server dies").
    public func subjects(of stream: String, matching filter: String) throws(NATSError) -> [String: UInt64] {
        var options = jsOptions()
        try NATSError.check(jsOptions_Init(&options), "stream info \(stream): options")
        options.Wait = requestTimeout.milliseconds
        return try streamInfo("subjects \(filter) of \(stream)") { info, code in
            filter.withCString { cFilter in
                options.Stream.Info.SubjectsFilter = cFilter
                return js_GetStreamInfo(info, context, stream, &options, code)
            }
        } read: { info in
            guard let list = info.State.Subjects?.pointee, let entries = list.List else { return [:] }
            var subjects: [String: UInt64] = [:]
            for entry in UnsafeBufferPointer(start: entries, count: Int(list.Count)) {
                if let subject = entry.Subject { subjects[String(cString: subject)] = entry.Msgs }
            }
            return subjects
        }
    }

    /// Calls `request`, a libnats call that answers with a stream's info, checks its status (`operation`
    /// names it in the error) and gives the answer to `read` before freeing it.
    private func streamInfo<Result>(
        _ operation: String,
        _ request: (UnsafeMutablePointer<UnsafeMutablePointer<jsStreamInfo>?>, UnsafeMutablePointer<jsErrCode>) -> natsStatus,
        read: (jsStreamInfo) throws(NATSError) -> Result
    ) throws(NATSError) -> Result {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        try NATSError.check(request(&info, &code), operation, code: code)
        defer { jsStreamInfo_Destroy(info) }
        return try read(info!.pointee)
    }

    /// Deletes a stream and its messages.
    public func deleteStream(_ name: String) throws(NATSError) {
        var code = jsErrCode(0)
        try NATSError.check(js_DeleteStream(context, name, nil, &code), "delete stream \(name)", code: code)
    }

    /// The message stored at `sequence` of `stream`.
    public func message(stream: String, sequence: UInt64) throws(NATSError) -> StreamMessage {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        try NATSError.check(js_GetMsg(&message, context, stream, sequence, nil, &code),
                            "get message \(sequence) of \(stream)", code: code)
        defer { natsMsg_Destroy(message) }
        return StreamMessage(stored: message!)
    }

    /// The last message stored on `subject` in `stream` (its ``StreamMessage/sequence`` is what a
    /// writer expects with ``PublishOptions/expectedLastSubjectSequence``).
    public func lastMessage(stream: String, subject: String) throws(NATSError) -> StreamMessage {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        try NATSError.check(js_GetLastMsg(&message, context, stream, subject, nil, &code),
                            "get last message on \(subject) of \(stream)", code: code)
        defer { natsMsg_Destroy(message) }
        return StreamMessage(stored: message!)
    }

    // MARK: Publishing

    /// Publishes one message and waits for the stream to store it.
    /// - Returns: where it was stored; ``PublishAck/duplicate`` when its message id was seen within the
    ///   stream's duplicate window (then it was not stored again, and the sequence is the first copy's).
    /// - Throws: ``NATSError``; a stale ``PublishOptions/expectedLastSubjectSequence`` fails with
    ///   ``NATSError/Reason/wrongLastSequence``.
    @discardableResult
    public func publish(_ subject: String, _ payload: [UInt8], options: PublishOptions = PublishOptions()) throws(NATSError) -> PublishAck {
        try options.withC { (cOptions) throws(NATSError) -> PublishAck in
            var ack: UnsafeMutablePointer<jsPubAck>?
            var code = jsErrCode(0)
            let status = payload.withUnsafeBytes { bytes in
                js_Publish(&ack, context, subject, bytes.baseAddress, Int32(bytes.count), cOptions, &code)
            }
            try NATSError.check(status, "publish to \(subject)", code: code)
            defer { jsPubAck_Destroy(ack) }
            return PublishAck(ack!.pointee)
        }
    }

    /// Publishes `messages` without waiting between them, then waits (at most `timeout` in all) for
    /// every acknowledgement: one round trip for the batch instead of one per message.
    ///
    /// The stream stores them in order. Each message succeeds or fails on its own (a stale expected
    /// sequence fails that message only); a message not acknowledged in time fails with
    /// ``NATSError/Reason/timeout`` and may or may not be stored — publish it again under the same
    /// message id, and the duplicate window makes the retry harmless.
    /// - Returns: one result per message, in order.
    public func publishBatch(_ messages: [OutgoingMessage], timeout: Duration = .seconds(10)) -> [Result<PublishAck, NATSError>] {
        batchLock.lock()
        defer { batchLock.unlock() }
        acknowledgements.begin(count: messages.count)
        for (index, message) in messages.enumerated() {
            var natsMessage: OpaquePointer?
            let created = message.payload.withUnsafeBytes { bytes in
                natsMsg_Create(&natsMessage, message.subject, nil, bytes.baseAddress?.assumingMemoryBound(to: CChar.self),
                               Int32(bytes.count))
            }
            if created != NATS_OK {
                acknowledgements.fail(index, NATSError.failed("publish to \(message.subject)", created))
                continue
            }
            // Registered before it is sent: the acknowledgement may arrive before js_PublishMsgAsync returns.
            acknowledgements.register(natsMessage!, index: index)
            let status = message.options.withC { cOptions in js_PublishMsgAsync(context, &natsMessage, cOptions) }
            if status != NATS_OK {
                // The client did not take the message: it is still ours, and no acknowledgement will come.
                let error = NATSError.failed("publish to \(message.subject)", status)
                if let natsMessage { acknowledgements.unregister(natsMessage) }
                acknowledgements.fail(index, error)
                natsMsg_Destroy(natsMessage)
            }
        }
        var completeOptions = jsPubOptions()
        jsPubOptions_Init(&completeOptions)
        completeOptions.MaxWait = timeout.milliseconds
        if js_PublishAsyncComplete(context, &completeOptions) != NATS_OK {
            // Take back what is still unacknowledged: no callback will come for it now.
            var pending = natsMsgList()
            if js_PublishAsyncGetPendingList(&pending, context) == NATS_OK {
                for i in 0..<Int(pending.Count) {
                    if let message = perimeter_nats_msg_list_at(&pending, Int32(i)) {
                        acknowledgements.timedOut(message, after: timeout)
                    }
                }
                natsMsgList_Destroy(&pending)
            }
        }
        return acknowledgements.finish()
    }

    /// The acknowledgement callback of asynchronous publishing; runs on a libnats thread, once per
    /// message, before js_PublishAsyncComplete can return. The message is ours to destroy.
    static let acknowledged: jsPubAckHandler = { _, message, ack, failure, closure in
        let collector = Unmanaged<AsyncAcknowledgements>.fromOpaque(closure!).takeUnretainedValue()
        if let message {
            if let ack {
                collector.complete(message, .success(PublishAck(ack.pointee)))
            } else {
                let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? "?"
                let status = failure?.pointee.Err ?? NATS_ERR
                let statusText = natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
                let text = failure?.pointee.ErrText.map { String(cString: $0) } ?? statusText
                collector.complete(message, .failure(NATSError(
                    operation: "publish to \(subject)", status: Int32(bitPattern: status.rawValue), statusText: statusText,
                    jetStreamCode: Int(failure?.pointee.ErrCode.rawValue ?? 0), text: text)))
            }
        }
        natsMsg_Destroy(message)
    }

    // MARK: Consumers and key-value buckets

    /// A pull consumer of `stream` that starts at `startSequence` (1 is the first message ever stored)
    /// and sees only `filterSubject` (wildcards allowed). See ``PullConsumer``.
    /// - Parameter creationTimeout: how long the creation may wait for the server (default: the
    ///   context's ``requestTimeout``). After a server of a cluster died, creations can time out for tens
    ///   of seconds; a short wait lets a caller that retries try again sooner.
    public func pullConsumer(stream: String, filterSubject: String, startSequence: UInt64,
                             inactiveThreshold: Duration = .seconds(60), creationTimeout: Duration? = nil) throws(NATSError) -> PullConsumer {
        try PullConsumer(jetStream: self, stream: stream, filterSubject: filterSubject, startSequence: startSequence,
                         inactiveThreshold: inactiveThreshold, creationTimeout: creationTimeout ?? requestTimeout)
    }

    /// Creates the bucket (or opens it when one with the same configuration exists).
    public func createKeyValue(_ configuration: KeyValueConfiguration) throws(NATSError) -> KeyValueBucket {
        try KeyValueBucket(creating: configuration, in: self)
    }

    /// Opens an existing bucket.
    public func keyValue(_ bucket: String) throws(NATSError) -> KeyValueBucket {
        try KeyValueBucket(opening: bucket, in: self)
    }

    /// Deletes a bucket and all its keys.
    public func deleteKeyValue(_ bucket: String) throws(NATSError) {
        try NATSError.check(js_DeleteKeyValue(context, bucket), "delete bucket \(bucket)")
    }
}

/// The results of one asynchronous batch, filled by the acknowledgement callback on libnats' thread.
final class AsyncAcknowledgements: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<PublishAck, NATSError>?] = []
    private var indexOf: [UInt: Int] = [:]

    func begin(count: Int) {
        lock.withLock {
            results = Array(repeating: nil, count: count)
            indexOf.removeAll(keepingCapacity: true)
        }
    }

    func register(_ message: OpaquePointer, index: Int) {
        lock.withLock { indexOf[UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(message)))] = index }
    }

    func unregister(_ message: OpaquePointer) {
        lock.withLock { _ = indexOf.removeValue(forKey: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(message)))) }
    }

    func fail(_ index: Int, _ error: NATSError) {
        lock.withLock { results[index] = .failure(error) }
    }

    func complete(_ message: OpaquePointer, _ result: Result<PublishAck, NATSError>) {
        lock.withLock {
            if let index = indexOf.removeValue(forKey: UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(message)))) {
                results[index] = result
            }
        }
    }

    func timedOut(_ message: OpaquePointer, after timeout: Duration) {
        let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? "?"
        complete(message, .failure(NATSError(operation: "publish to \(subject)", status: Int32(bitPattern: NATS_TIMEOUT.rawValue),
                                             statusText: "Timeout", jetStreamCode: 0,
                                             text: "no acknowledgement within \(timeout)")))
    }

    func finish() -> [Result<PublishAck, NATSError>] {
        lock.withLock {
            defer { results = []; indexOf.removeAll() }
            return results.map {
                $0 ?? .failure(NATSError(operation: "publish", status: Int32(bitPattern: NATS_ERR.rawValue), statusText: "Error",
                                         jetStreamCode: 0, text: "no acknowledgement arrived"))
            }
        }
    }
}
