#if canImport(Glibc)
import Glibc
#endif

/// Asks the kernel to back big, freshly allocated buffers with transparent huge pages (2 MiB).
///
/// The index's arrays are written once from start to end (the build) and then read at random (queries).
/// With 4 KiB pages, building a 150 MB index takes tens of thousands of page faults, and their kernel
/// work (zeroing, accounting, locking) was about a third of the build's CPU (perf, fence import); each
/// query's cell lookup and run may also each miss the TLB. Huge pages cut both by 512. On a kernel whose
/// transparent huge pages are off (`never`) or that refuses the advice the call does nothing and every
/// answer is the same: it is advice about memory, never about contents.
enum HugePages {
    /// Buffers smaller than this are left alone (malloc may serve them from its heap, and a few pages
    /// are not worth a system call).
    static let minimumBytes = 4 << 20

    /// Advises huge pages for the whole pages of `bytes` bytes at `start`.
    static func advise(_ start: UnsafeRawPointer?, bytes: Int) {
        #if os(Linux)
        guard let start, bytes >= minimumBytes else { return }
        let page = UInt(4096)
        let lo = (UInt(bitPattern: start) + page - 1) & ~(page - 1)
        let hi = (UInt(bitPattern: start) + UInt(bytes)) & ~(page - 1)
        guard hi > lo, let address = UnsafeMutableRawPointer(bitPattern: lo) else { return }
        _ = madvise(address, Int(hi - lo), 14)  // MADV_HUGEPAGE (a macro Swift does not import)
        #endif
    }

    /// Advises huge pages for the whole capacity of `array` (call after reserving, before writing).
    static func advise<Element>(capacityOf array: inout [Element]) {
        let bytes = array.capacity * MemoryLayout<Element>.stride
        guard bytes >= minimumBytes else { return }
        array.withUnsafeMutableBufferPointer { advise(UnsafeRawPointer($0.baseAddress), bytes: bytes) }
    }
}
