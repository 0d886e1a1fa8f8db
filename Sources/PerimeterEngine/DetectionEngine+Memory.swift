import Foundation

extension DetectionEngine {
    /// What the engine's per-device state occupies, in bytes, counted from its containers' capacities
    /// (the allocator's own overhead left out). Fence and index memory are not included.
    public struct DeviceMemory: Hashable, Sendable {
        /// Device slots, forgotten ones included (their slots stay behind, empty).
        public var devices: Int
        /// The fixed part: every slot's state and the device table, whatever the devices are inside.
        public var fixedBytes: Int
        /// Fence lists: the pool of the memberships of devices inside fences (its free blocks and spare
        /// capacity included), the few instant visits (with the side table that holds them, each list with
        /// its array header), and the update counts past 2³² − 2 (a side table, empty in practice).
        public var presenceBytes: Int
        /// Device ids too long to be stored inline in their state (over 15 UTF-8 bytes).
        public var idBytes: Int
        /// Of ``fixedBytes``: the device table's buckets (the rest is the device records' array).
        public var tableBytes: Int = 0

        /// The fixed part per device slot: what an idle device (inside no fence, short id) costs.
        public var idleDeviceBytes: Double { devices == 0 ? 0 : Double(fixedBytes) / Double(devices) }
        /// One device record with its share of the device table: what an idle device costs apart from
        /// the spare capacity of the records' array (which grows by an eighth). At most 56 bytes.
        public var recordBytes: Double {
            devices == 0 ? 0 : Double(MemoryLayout<DeviceRecord>.stride) + Double(tableBytes) / Double(devices)
        }
        /// All of it.
        public var totalBytes: Int { fixedBytes + presenceBytes + idBytes }
    }

    /// Size of a Swift array's heap header (object header, count, capacity) on 64-bit platforms.
    static let arrayHeaderBytes = 32

    /// What the per-device state occupies now.
    /// - Complexity: O(d) for d device slots.
    public var deviceMemory: DeviceMemory {
        var presence = 0, ids = 0
        // One pool holds every fence list, its free blocks and spare capacity counted.
        presence += presencePool.byteCount
        presence += largeUpdateCounts.capacity * (MemoryLayout<Int32>.stride + MemoryLayout<UInt64>.stride)
        for state in devices {
            let length = state.id.rawValue.utf8.count
            if length > 15 { ids += Self.arrayHeaderBytes + length + 1 }
        }
        // Instant visits sit beside the records, in a table that is empty unless some device has any.
        presence += instantVisits.capacity * (MemoryLayout<Int32>.stride + MemoryLayout<[InstantVisit]>.stride)
        for visits in instantVisits.values where visits.capacity > 0 {
            presence += Self.arrayHeaderBytes + visits.capacity * MemoryLayout<InstantVisit>.stride
        }
        return DeviceMemory(devices: devices.count,
                            fixedBytes: devices.capacity * MemoryLayout<DeviceRecord>.stride + deviceTable.bucketBytes,
                            presenceBytes: presence, idBytes: ids, tableBytes: deviceTable.bucketBytes)
    }
}
