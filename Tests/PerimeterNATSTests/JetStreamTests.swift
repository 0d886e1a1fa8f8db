import Foundation
import PerimeterNATS
import PerimeterTestSupport
import Testing

@Suite("JetStream on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct JetStreamTests {
    @Test func publishDeduplicatesByMessageID() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let stream = unique("DEDUPE"), subject = unique("dedupe")
            try js.addStream(StreamConfiguration(name: stream, subjects: [subject], duplicateWindow: .seconds(60)))
            let first = try js.publish(subject, "one".bytes, options: PublishOptions(messageID: "event-1"))
            let again = try js.publish(subject, "one again".bytes, options: PublishOptions(messageID: "event-1"))
            let second = try js.publish(subject, "two".bytes, options: PublishOptions(messageID: "event-2"))
            try check(!first.duplicate && again.duplicate && !second.duplicate, "duplicate flags \(first) \(again) \(second)")
            try check(again.sequence == first.sequence, "a duplicate reports the first copy's sequence")
            try check(second.sequence == first.sequence + 1, "the duplicate took no sequence")
            let state = try js.streamState(stream)
            try check(state.messages == 2, "stored \(state.messages) messages, expected 2")
            let stored = try js.message(stream: stream, sequence: first.sequence)
            try check(stored.payload == "one".bytes && stored.messageID == "event-1", "the first copy is kept: \(stored)")
            try js.deleteStream(stream)
        }
    }

    @Test func staleExpectedSequenceIsRejected() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let stream = unique("EXPECT"), subject = unique("expect")
            try js.addStream(StreamConfiguration(name: stream, subjects: ["\(subject).*"]))
            let a = "\(subject).a", b = "\(subject).b"
            let first = try js.publish(a, "1".bytes, options: PublishOptions(expectedLastSubjectSequence: 0))
            _ = try js.publish(b, "other subject".bytes)
            // The expectation is per subject: a message on b does not move a's last sequence.
            let second = try js.publish(a, "2".bytes, options: PublishOptions(expectedLastSubjectSequence: first.sequence))
            do {
                try js.publish(a, "stale writer".bytes, options: PublishOptions(expectedLastSubjectSequence: first.sequence))
                throw Failed("a stale expected sequence was accepted")
            } catch let error as NATSError {
                try check(error.reason == .wrongLastSequence, "reason \(error.reason): \(error)")
                try check(error.jetStreamCode == 10071, "code \(error.jetStreamCode)")
                try check(error.description.contains("publish to \(a)"), "the error says what failed: \(error)")
            }
            do {
                try js.publish(b, "expected empty".bytes, options: PublishOptions(expectedLastSubjectSequence: 0))
                throw Failed("expecting no message on a subject that has one was accepted")
            } catch let error as NATSError {
                try check(error.reason == .wrongLastSequence, "reason \(error.reason): \(error)")
            }
            // A retry of a stored message is a duplicate, not a stale writer: the duplicate check comes
            // first, so a writer whose acknowledgement was lost can resend under the same id.
            let fenced = try js.publish(a, "3".bytes, options: PublishOptions(messageID: "m3", expectedLastSubjectSequence: second.sequence))
            let retried = try js.publish(a, "3".bytes, options: PublishOptions(messageID: "m3", expectedLastSubjectSequence: second.sequence))
            try check(retried.duplicate && retried.sequence == fenced.sequence, "a retry under the same id: \(retried)")
            let last = try js.lastMessage(stream: stream, subject: a)
            try check(last.sequence == fenced.sequence && last.payload == "3".bytes, "the stale writes left nothing: \(last)")
            try js.deleteStream(stream)
        }
    }

    @Test func batchPublishAcknowledgesEachMessageInOrder() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let stream = unique("BATCH"), subject = unique("batch")
            try js.addStream(StreamConfiguration(name: stream, subjects: ["\(subject).>"]))
            let messages = (0..<500).map { i in
                OutgoingMessage(subject: "\(subject).\(i % 5)", payload: "m\(i)".bytes, options: PublishOptions(messageID: "id-\(i)"))
            }
            let results = js.publishBatch(messages)
            let acks = try results.map { try $0.get() }
            try check(acks.map(\.sequence) == Array(1...500), "sequences in publish order")
            try check(acks.allSatisfy { !$0.duplicate && $0.stream == stream }, "fresh messages in \(stream)")
            // Resending a part of the batch (as after a timeout) stores nothing twice.
            let resent = try js.publishBatch(Array(messages[100..<200])).map { try $0.get() }
            try check(resent.allSatisfy(\.duplicate), "a resent message is a duplicate")
            try check(resent.map(\.sequence) == Array(101...200), "duplicates report the stored sequences")
            // Expected sequences in a batch: the stale one fails alone, the rest are stored.
            let lastOnZero = try js.lastMessage(stream: stream, subject: "\(subject).0").sequence
            let mixed = js.publishBatch([
                OutgoingMessage(subject: "\(subject).0", payload: "fresh".bytes, options: PublishOptions(expectedLastSubjectSequence: lastOnZero)),
                OutgoingMessage(subject: "\(subject).0", payload: "stale".bytes, options: PublishOptions(expectedLastSubjectSequence: lastOnZero)),
                OutgoingMessage(subject: "\(subject).1", payload: "free".bytes),
            ])
            guard case .success(let fresh) = mixed[0], case .failure(let stale) = mixed[1], case .success = mixed[2] else {
                throw Failed("batch results \(mixed)")
            }
            try check(fresh.sequence == 501, "fresh at \(fresh.sequence)")
            try check(stale.reason == .wrongLastSequence && stale.jetStreamCode == 10071, "stale: \(stale)")
            try check(try js.streamState(stream).messages == 502, "500 + 2 stored")
            try js.deleteStream(stream)
        }
    }

    @Test func pullConsumerReadsFromASequence() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let stream = unique("PULL"), subject = unique("pull")
            try js.addStream(StreamConfiguration(name: stream, subjects: ["\(subject).*"]))
            let acks = try js.publishBatch((1...300).map { i in
                OutgoingMessage(subject: "\(subject).\(i % 2 == 0 ? "even" : "odd")", payload: "\(i)".bytes)
            }).map { try $0.get() }
            try check(acks.last?.sequence == 300, "300 stored")

            // From sequence 101, every subject: 200 messages in order, over several fetches.
            let consumer = try js.pullConsumer(stream: stream, filterSubject: "\(subject).*", startSequence: 101)
            var seen: [StreamMessage] = []
            while seen.count < 200 {
                let batch = try consumer.fetch(max: 64, timeout: .seconds(5))
                try check(!batch.isEmpty, "a fetch returned nothing after \(seen.count) messages")
                seen += batch
            }
            try check(seen.map(\.sequence) == Array(101...300), "sequences 101…300 in order")
            try check(seen.map { String(decoding: $0.payload, as: UTF8.self) } == (101...300).map(String.init), "payloads")
            try check(seen.allSatisfy { $0.storedAtNanoseconds > 0 }, "store times")
            try check(try consumer.fetch(max: 10, timeout: .milliseconds(200)).isEmpty, "nothing more")
            // New messages arrive at the same consumer.
            try js.publish("\(subject).odd", "301".bytes)
            let next = try consumer.fetch(max: 10, timeout: .seconds(5))
            try check(next.map(\.sequence) == [301], "the new message: \(next.map(\.sequence))")
            consumer.close()

            // A filter and a start: only the even subject, from 250.
            let evens = try js.pullConsumer(stream: stream, filterSubject: "\(subject).even", startSequence: 250)
            let got = try evens.fetch(max: 1000, timeout: .seconds(5))
            try check(got.map(\.sequence) == Array(stride(from: 250, through: 300, by: 2)), "evens from 250: \(got.map(\.sequence))")
            try check(got.allSatisfy { $0.subject == "\(subject).even" }, "subjects")
            evens.close()
            try js.deleteStream(stream)
        }
    }

    @Test func errorsNameTheOperationAndTheServerCode() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            do {
                _ = try js.streamState(unique("MISSING"))
                throw Failed("stream info of a missing stream succeeded")
            } catch let error as NATSError {
                try check(error.reason == .notFound && error.jetStreamCode == 10059, "missing stream: \(error)")
                try check(error.description.contains("stream info"), "\(error)")
            }
            try NATSServer.withRefusingPort { port in
                do {
                    _ = try NATSConnection(NATSConnection.Options(urls: ["nats://127.0.0.1:\(port)"],
                                                                  connectTimeout: .milliseconds(500), maxReconnects: 0))
                    throw Failed("connecting to a closed port succeeded")
                } catch let error as NATSError {
                    try check(error.reason == .unreachable, "no server: \(error)")
                }
            }
        }
    }
}
