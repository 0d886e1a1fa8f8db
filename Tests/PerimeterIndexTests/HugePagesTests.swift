import Testing
@testable import PerimeterIndex

/// Huge-page advice is about memory only: buffers keep every value written before and after it, whatever
/// their alignment, and small or empty buffers are left alone.
@Suite struct HugePagesTests {
    @Test func adviceKeepsContents() {
        for offset in [0, 1, 7] {
            let count = (HugePages.minimumBytes / 8) * 3 + offset
            var values = (0..<count).map { UInt64($0) &* 0x9E37_79B9_7F4A_7C15 }
            values.withUnsafeMutableBufferPointer { buffer in
                // Unaligned start and end: only whole pages inside the buffer are advised.
                let start = UnsafeRawPointer(buffer.baseAddress!) + offset
                HugePages.advise(start, bytes: buffer.count * 8 - offset)
            }
            for k in stride(from: 0, to: count, by: 4099) { values[k] &+= 1 }
            #expect(values.indices.allSatisfy { k in
                values[k] == UInt64(k) &* 0x9E37_79B9_7F4A_7C15 &+ (k % 4099 == 0 ? 1 : 0)
            })
        }
    }

    @Test func reservedCapacityIsAdvisedBeforeWriting() {
        var records: [EdgeRecord] = []
        records.reserveCapacity(HugePages.minimumBytes / 16)
        HugePages.advise(capacityOf: &records)
        for k in 0..<records.capacity { records.append(EdgeRecord(ax: Double(k), ay: 1, bx: 2, by: 3)) }
        #expect(records.count == records.capacity)
        #expect(records.enumerated().allSatisfy { $0.element.ax == Double($0.offset) && $0.element.by == 3 })
    }

    @Test func smallAndEmptyBuffersAreLeftAlone() {
        var empty: [UInt32] = []
        HugePages.advise(capacityOf: &empty)
        HugePages.advise(nil, bytes: 1 << 30)
        var small = [UInt32](repeating: 5, count: 1000)
        HugePages.advise(capacityOf: &small)
        #expect(empty.isEmpty && small.allSatisfy { $0 == 5 })
    }
}
