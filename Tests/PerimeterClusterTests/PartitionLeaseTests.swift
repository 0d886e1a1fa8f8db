import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterNATS
import PerimeterTestSupport
import Testing

/// One server for this target's tests, killed at exit (NATSServer's registry).
enum SharedServer {
    static let server: Result<NATSServer, any Error> = Result { try NATSServer.start(name: "cluster-tests") }

    static func jetStream() throws -> JetStream {
        try JetStream(NATSConnection(urls: [server.get().url], name: "perimeter-cluster-tests"))
    }
}

struct Failed: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

func check(_ condition: Bool, _ message: @autoclosure () -> String, line: UInt = #line) throws {
    if !condition { throw Failed("\(message()) (line \(line))") }
}

func uniqueBucket() -> String { "leases_\(UUID().uuidString.prefix(8).lowercased())" }

@Suite("Device partitioning (pure)")
struct DevicePartitioningTests {
    @Test func partitionsAreStableAndInRange() throws {
        let partitioning = try #require(DevicePartitioning(count: 64))
        #expect(DevicePartitioning(count: 0) == nil)
        // Pinned values (computed outside Swift): a device's partition must never change between
        // versions, since its input and state live there.
        let pinned: [(String, Int)] = [("van-7", 30), ("TRK_0042", 43), ("a.b c", 26), ("Café", 35), ("", 40)]
        for (id, partition) in pinned {
            #expect(partitioning.partition(of: DeviceID(id)) == partition, "\(id)")
        }
        var random = SplitMix64(seed: 64)
        for _ in 0..<1000 {
            let id = DeviceID("device-\(random.next())")
            #expect((0..<64).contains(partitioning.partition(of: id)))
        }
        #expect(partitioning.partition(of: "Cafe\u{301}") == partitioning.partition(of: "Caf\u{E9}"))
    }
}

@Suite("Partition leases on a real nats-server", .disabled(if: NATSServer.binary == nil, "nats-server is not installed (make deps)"))
struct PartitionLeaseTests {
    @Test func oneHolderAtATimeAndARenewalKeepsIt() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let bucket = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: .seconds(30)))
            let a = try PartitionLease.acquire(in: bucket, partition: 3, owner: "worker-a", duration: .seconds(30))
            guard let a else { throw Failed("a free partition was not acquired") }
            try check(a.isValid, "a fresh lease is valid")
            try check(try PartitionLease.acquire(in: bucket, partition: 3, owner: "worker-b", duration: .seconds(30)) == nil,
                      "a held partition is refused")
            try check(try PartitionLease.acquire(in: bucket, partition: 4, owner: "worker-b", duration: .seconds(30)) != nil,
                      "another partition is free")
            let before = a.revision
            try check(try a.renew(), "renewal")
            try check(a.revision > before && a.isValid, "a renewal moves the fencing token")
            try check(try bucket.get(PartitionLease.key(3))?.text == "worker-a", "the key names the holder")
            // Release: the partition is free for the next worker at once.
            try a.release()
            try check(!a.isValid && a.isLost, "released is lost")
            guard let b = try PartitionLease.acquire(in: bucket, partition: 3, owner: "worker-b", duration: .seconds(30)) else {
                throw Failed("a released partition was not acquired")
            }
            try check(b.revision > a.revision, "the new holder's token is newer")
            // The old holder can neither renew nor release the new holder's lease.
            try check(try a.renew() == false, "a released lease does not come back")
            try a.release()
            try check(try bucket.get(PartitionLease.key(3))?.text == "worker-b", "a stale release changed nothing")
            try js.deleteKeyValue(bucket.name)
        }
    }

    @Test func aHolderThatStopsRenewingLosesThePartitionAndIsFencedOut() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let duration = Duration.seconds(1)
            let bucket = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: duration))
            let sentBefore = Date()
            guard let a = try PartitionLease.acquire(in: bucket, partition: 0, owner: "worker-a", duration: duration) else {
                throw Failed("not acquired")
            }
            try check(a.isValid || Date().timeIntervalSince(sentBefore) > 0.75, "valid at first")
            // worker-a stalls (no renewal). It stops trusting its lease before the key can expire: 0.8 s
            // after it asked for the lease (however late this thread wakes), the lease is no longer valid.
            let wake = sentBefore.addingTimeInterval(0.8).timeIntervalSinceNow
            if wake > 0 { usleep(UInt32(wake * 1_000_000)) }
            try check(!a.isValid, "the stalled holder still trusts its lease 0.8 s into a 1 s lease")
            // … and once the key expires, worker-b takes the partition.
            var b: PartitionLease?
            let deadline = Date().addingTimeInterval(10)
            while b == nil && Date() < deadline {
                b = try PartitionLease.acquire(in: bucket, partition: 0, owner: "worker-b", duration: duration)
                if b == nil { usleep(100_000) }
            }
            guard let b else { throw Failed("worker-b never got the expired lease") }
            try check(b.isValid, "the new holder's lease is valid")
            // worker-a wakes up: its renewal fails for good, even though its revision was once right.
            try check(try a.renew() == false && a.isLost, "the stale holder is fenced out")
            try check(try b.renew(), "the new holder renews")
            try js.deleteKeyValue(bucket.name)
        }
    }

    /// Renewals that go unanswered past the lease's validity (the leases stream without a leader after
    /// a server died) leave it lapsed, not lost: its holder does nothing, and a renewal at the revision
    /// held brings it back when nobody wrote the key since; once the key has expired, it is lost.
    @Test func aLapsedLeaseComesBackOnlyWhileNobodyWroteTheKey() async throws {
        try await offThePool {
            let js = try SharedServer.jetStream()
            let duration = Duration.seconds(6)
            let bucket = try js.createKeyValue(PartitionLease.bucketConfiguration(name: uniqueBucket(), duration: duration))
            let sentBefore = Date()
            guard let a = try PartitionLease.acquire(in: bucket, partition: 0, owner: "worker-a", duration: duration) else {
                throw Failed("not acquired")
            }
            // Past the validity (4.5 s), before the key's expiry (6 s).
            let wake = sentBefore.addingTimeInterval(4.8).timeIntervalSinceNow
            if wake > 0 { usleep(UInt32(wake * 1_000_000)) }
            try check(!a.isValid && a.isLapsed && !a.isLost, "lapsed, not lost")
            try check(try a.renew() && a.isValid && !a.isLapsed, "a renewal at the revision held brings it back")
            try check(try bucket.get(PartitionLease.key(0))?.revision == a.revision, "the key holds the new revision")
            // Nobody renews: the key expires with the bucket's TTL.
            let deadline = Date().addingTimeInterval(20)
            while try bucket.get(PartitionLease.key(0)) != nil {
                if Date() > deadline { throw Failed("the key did not expire") }
                usleep(200_000)
            }
            try check(a.isLapsed, "lapsed again")
            try check(try a.renew() == false && a.isLost && !a.isLapsed, "an expired key is not taken back by a renewal")
            try js.deleteKeyValue(bucket.name)
        }
    }
}
