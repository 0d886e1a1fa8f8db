import Foundation
import PerimeterNATS
import PerimeterTestSupport
import Testing

@Suite("Swift's partition equals the server's {{partition(N,1)}}", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct PartitionMappingTests {
    @Test(arguments: mappedPartitionCounts)
    func serverMappingPicksSwiftsPartition(count: Int) async throws {
        let mismatches = try await offThePool { () -> [String] in
            let js = try SharedServer.jetStream()
            let stream = unique("PART\(count)")
            try js.addStream(StreamConfiguration(name: stream, subjects: ["ptest.out\(count).>"], storage: .memory))
            // Random ids of every kind, encoded to one token each; the server maps ptest.in<N>.<token>
            // to ptest.out<N>.<its partition>.<token>.
            var random = SplitMix64(seed: UInt64(count))
            let alphabet = Array("abcXYZ019-_. *>~=é漢🚐\t")
            var tokens: [String] = []
            for i in 0..<400 {
                let length = 1 + Int(random.next() % 16)
                let id = String((0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }) + "\(i)"
                tokens.append(SubjectToken.encode(id))
            }
            let acks = js.publishBatch(tokens.map { OutgoingMessage(subject: "ptest.in\(count).\($0)", payload: Array($0.utf8)) })
            for ack in acks { _ = try ack.get() }
            let consumer = try js.pullConsumer(stream: stream, filterSubject: "ptest.out\(count).>", startSequence: 1)
            var messages: [StreamMessage] = []
            while messages.count < tokens.count {
                let batch = try consumer.fetch(max: 500, timeout: .seconds(5))
                if batch.isEmpty { throw Failed("only \(messages.count) of \(tokens.count) messages arrived") }
                messages += batch
            }
            consumer.close()
            try js.deleteStream(stream)
            var mismatches: [String] = []
            var used = Set<Int>()
            for message in messages {
                let parts = message.subject.split(separator: ".", maxSplits: 3)
                let token = String(decoding: message.payload, as: UTF8.self)
                guard parts.count == 4, let serverPartition = Int(parts[2]), parts[3] == token else {
                    mismatches.append("unexpected subject \(message.subject) for \(token)")
                    continue
                }
                used.insert(serverPartition)
                let swiftPartition = SubjectToken.partition(ofToken: token, count: count)
                if swiftPartition != serverPartition { mismatches.append("\(token): server \(serverPartition), Swift \(swiftPartition)") }
            }
            if used.count < min(count, 7) { mismatches.append("only partitions \(used.sorted()) used") }
            return mismatches
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(10))")
    }
}
