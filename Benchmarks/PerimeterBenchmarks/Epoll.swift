import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Linux `epoll`, for the load generator's event loop.
///
/// Swift's Glibc module does not export `<sys/epoll.h>`, and the package has no C shim for the benchmarks,
/// so the three functions are looked up with `dlsym` and `struct epoll_event` is laid out by hand: on
/// x86-64 the kernel's struct is packed (4-byte events, 8-byte data at offset 4, 12 bytes); elsewhere the
/// data is 8-aligned (16 bytes). The `data` word carries a connection index.
final class Epoll {
    /// Readable (`EPOLLIN`).
    static let readable: UInt32 = 0x001
    /// Writable (`EPOLLOUT`).
    static let writable: UInt32 = 0x004
    /// Error (`EPOLLERR`, always reported).
    static let error: UInt32 = 0x008
    /// Hang-up (`EPOLLHUP`, always reported).
    static let hangUp: UInt32 = 0x010

    #if arch(x86_64)
    static let eventSize = 12
    static let dataOffset = 4
    #else
    static let eventSize = 16
    static let dataOffset = 8
    #endif

    private typealias Create = @convention(c) (Int32) -> Int32
    private typealias Control = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    private typealias Wait = @convention(c) (Int32, UnsafeMutableRawPointer, Int32, Int32) -> Int32

    private let control: Control
    private let wait: Wait
    /// The epoll descriptor.
    let descriptor: Int32
    /// Room for the events of one wait.
    private let events: UnsafeMutableRawPointer
    /// How many events one wait can return.
    let capacity: Int

    /// Why an epoll instance could not be made or changed.
    struct Failure: Error, CustomStringConvertible {
        /// What failed.
        var description: String
    }

    /// A new epoll instance reporting at most `capacity` events per wait.
    init(capacity: Int) throws(Failure) {
        let handle = UnsafeMutableRawPointer(bitPattern: 0)  // RTLD_DEFAULT
        guard let create = dlsym(handle, "epoll_create1"), let control = dlsym(handle, "epoll_ctl"),
              let wait = dlsym(handle, "epoll_wait") else {
            throw Failure(description: "epoll_create1, epoll_ctl or epoll_wait not found (not Linux?)")
        }
        let fd = unsafeBitCast(create, to: Create.self)(Int32(O_CLOEXEC))
        guard fd >= 0 else { throw Failure(description: "epoll_create1 failed (errno \(errno))") }
        descriptor = fd
        self.control = unsafeBitCast(control, to: Control.self)
        self.wait = unsafeBitCast(wait, to: Wait.self)
        self.capacity = max(1, capacity)
        events = .allocate(byteCount: self.capacity * Self.eventSize, alignment: 8)
    }

    deinit {
        events.deallocate()
        close(descriptor)
    }

    /// Adds (`EPOLL_CTL_ADD`) or changes (`EPOLL_CTL_MOD`) what `fd` is watched for; `token` comes back with its events.
    func watch(_ fd: Int32, for interest: UInt32, token: Int, change: Bool = false) throws(Failure) {
        var event = (UInt64(0), UInt64(0))  // 16 zeroed bytes, room for either layout
        let result = withUnsafeMutableBytes(of: &event) { raw in
            raw.storeBytes(of: interest, toByteOffset: 0, as: UInt32.self)
            raw.storeBytes(of: UInt64(token), toByteOffset: Self.dataOffset, as: UInt64.self)
            return control(descriptor, change ? 3 : 1, fd, raw.baseAddress)
        }
        guard result == 0 else { throw Failure(description: "epoll_ctl failed (errno \(errno)) for descriptor \(fd)") }
    }

    /// Stops watching `fd` (`EPOLL_CTL_DEL`); closing it does the same.
    func unwatch(_ fd: Int32) {
        _ = control(descriptor, 2, fd, nil)
    }

    /// Waits at most `milliseconds` for events; returns how many (0 on a timeout or an interruption).
    /// Read them with ``event(_:)``.
    func wait(milliseconds: Int32) -> Int {
        let count = wait(descriptor, events, Int32(capacity), milliseconds)
        return max(0, Int(count))
    }

    /// Event `index` of the last wait: what happened and the token given to ``watch(_:for:token:change:)``.
    func event(_ index: Int) -> (events: UInt32, token: Int) {
        let base = events + index * Self.eventSize
        return (base.loadUnaligned(as: UInt32.self), Int(truncatingIfNeeded: base.loadUnaligned(fromByteOffset: Self.dataOffset, as: UInt64.self)))
    }
}
