internal import CNATS
import Foundation

/// An ephemeral pull consumer: reads one stream's messages on a filter subject in stream order, from a
/// chosen sequence on, as fast as the reader fetches them.
///
/// A Perimeter worker replays a partition's input from the sequence its snapshot covers; it keeps that
/// position itself, so the consumer acknowledges every fetched batch at once (ack-all on the batch's
/// last message) and never redelivers. The server forgets the consumer when nobody fetched for the
/// inactive threshold, or at ``close()``. Use one consumer from one thread at a time.
public final class PullConsumer: @unchecked Sendable {
    /// The stream it reads.
    public let stream: String
    /// The subjects it sees.
    public let filterSubject: String
    private let jetStream: JetStream
    private let subscription: OpaquePointer
    private let lock = NSLock()
    private var closed = false

    /// The most messages one fetch returns (below the consumer's limit of unacknowledged messages).
    public static let maxBatch = 10_000

    init(jetStream: JetStream, stream: String, filterSubject: String, startSequence: UInt64,
         inactiveThreshold: Duration, creationTimeout: Duration) throws(NATSError) {
        self.jetStream = jetStream
        self.stream = stream
        self.filterSubject = filterSubject
        var options = jsSubOptions()
        try NATSError.check(jsSubOptions_Init(&options), "pull consumer options")
        options.Config.DeliverPolicy = startSequence <= 1 ? js_DeliverAll : js_DeliverByStartSequence
        options.Config.OptStartSeq = startSequence <= 1 ? 0 : startSequence
        options.Config.AckPolicy = js_AckAll
        options.Config.MaxAckPending = Int64(PullConsumer.maxBatch) * 2
        options.Config.InactiveThreshold = inactiveThreshold.nanoseconds
        var contextOptions = jsOptions()
        try NATSError.check(jsOptions_Init(&contextOptions), "pull consumer: JetStream options")
        contextOptions.Wait = creationTimeout.milliseconds
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = stream.withCString { cStream in
            options.Stream = cStream
            return js_PullSubscribe(&subscription, jetStream.context, filterSubject, nil, &contextOptions, &options, &code)
        }
        try NATSError.check(status, "pull consumer on \(filterSubject) of \(stream) from \(startSequence)", code: code)
        self.subscription = subscription!
    }

    deinit {
        close()
        natsSubscription_Destroy(subscription)
    }

    /// Up to `max` messages, in stream order, waiting at most `timeout` for the first; fewer (or none)
    /// when the stream has no more now. Every returned message is acknowledged.
    public func fetch(max: Int, timeout: Duration) throws(NATSError) -> [StreamMessage] {
        let batch = Int32(Swift.max(1, Swift.min(max, PullConsumer.maxBatch)))
        var list = natsMsgList()
        var code = jsErrCode(0)
        let status = natsSubscription_Fetch(&list, subscription, batch, timeout.milliseconds, &code)
        defer { natsMsgList_Destroy(&list) }
        if status == NATS_TIMEOUT && list.Count == 0 { return [] }
        try NATSError.check(status, "fetch from \(filterSubject) of \(stream)", code: code)
        var messages: [StreamMessage] = []
        messages.reserveCapacity(Int(list.Count))
        var last: OpaquePointer?
        for i in 0..<list.Count {
            guard let message = perimeter_nats_msg_list_at(&list, i) else { continue }
            var meta: UnsafeMutablePointer<jsMsgMetaData>?
            try NATSError.check(natsMsg_GetMetaData(&meta, message), "fetch: message metadata")
            defer { jsMsgMetaData_Destroy(meta) }
            messages.append(StreamMessage(message: message, sequence: meta!.pointee.Sequence.Stream, time: meta!.pointee.Timestamp))
            last = message
        }
        if let last { try NATSError.check(natsMsg_Ack(last, nil), "fetch: acknowledge") }
        return messages
    }

    /// Removes the consumer from the server. Idempotent.
    public func close() {
        let first = lock.withLock { () -> Bool in
            defer { closed = true }
            return !closed
        }
        if first { _ = natsSubscription_Unsubscribe(subscription) }
    }
}
