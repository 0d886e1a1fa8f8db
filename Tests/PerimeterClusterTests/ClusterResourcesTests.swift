import Foundation
import PerimeterCluster
import PerimeterEngine
import PerimeterNATS
import PerimeterTestSupport
import Testing

@Suite("Cluster resources (NATS on loopback)")
struct ClusterResourcesTests {
    /// Every process opens the same resources at start, in any order: the second open finds what the
    /// first created, and the buckets hold what was written through either.
    @Test func openingTwiceFindsTheSameStreamsAndBuckets() throws {
        let js = try SharedServer.jetStream()
        let layout = ClusterLayout(prefix: "r\(UUID().uuidString.prefix(8).lowercased())", partitioning: DevicePartitioning(count: 4)!)
        let first = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(30))
        try first.fences.put("depot", Array("fence".utf8))
        let second = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(30))
        try check(second.fences.get("depot")?.text == "fence", "the second open sees the first's fence")
        // Consent: a bucket of its own, named like the others, keeping only each key's latest value.
        try check(first.consent.name == "\(layout.prefix)-consent", "the consent bucket's name")
        let key = ConsentRecord.key(of: DeviceID("ünï"))
        try first.consent.put(key, ConsentRecord.value(true))
        try second.consent.put(key, ConsentRecord.value(false))
        try check(try first.consent.get(key).map { ConsentRecord.isConsentGiven($0.value) } == false, "one bucket for both")
        try check(try js.streamState("KV_\(first.consent.name)").messages == 1, "history 1: the latest value only")
        try check(try js.streamState(layout.inputStream).messages == 0, "the input stream exists and is empty")
        let lease = try PartitionLease.acquire(in: first.leases, partition: 1, owner: "w1", duration: .seconds(30))
        try check(lease != nil, "a lease is taken through the first")
        try check(try PartitionLease.acquire(in: second.leases, partition: 1, owner: "w2", duration: .seconds(30)) == nil,
                  "the second sees it held")
    }

    /// A process started with another lease time must not silently run beside the others.
    @Test func aDifferentLeaseTimeIsRefused() throws {
        let js = try SharedServer.jetStream()
        let layout = ClusterLayout(prefix: "r\(UUID().uuidString.prefix(8).lowercased())", partitioning: DevicePartitioning(count: 4)!)
        _ = try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(30))
        #expect(throws: NATSError.self) { try ClusterResources.open(on: js, layout: layout, leaseDuration: .seconds(5)) }
    }
}
