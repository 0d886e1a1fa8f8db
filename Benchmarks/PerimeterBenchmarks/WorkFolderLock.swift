import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive hold on a benchmark work folder (`--work`, `bench/work` by default) for one run.
///
/// Two runs in the same folder would overwrite each other's store files, compiled peers and exchange
/// files, and both would report figures from damaged data. The hold is a `flock` on a file in the folder:
/// the kernel releases it when the process ends, however it ends, so a crashed run never leaves the folder
/// locked. A second run is refused at once with the folder named and the way around it.
public final class WorkFolderLock {
    /// Why the folder could not be held.
    public struct Refusal: Error, CustomStringConvertible {
        /// The folder another run holds, or that could not be locked.
        public var folder: String
        /// What went wrong, in words.
        public var description: String
    }

    /// Name of the lock file inside the work folder.
    public static let fileName = ".perimeter-bench.lock"

    private var descriptor: Int32

    /// Takes the folder (which must exist) for this process, or throws ``Refusal`` when another run holds
    /// it. The lock file records the holder's process id, which the refusal quotes.
    public init(folder: String) throws(Refusal) {
        let path = folder + "/" + Self.fileName
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw Refusal(folder: folder, description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let reason = errno
            let holder = Self.recordedHolder(fd)
            close(fd)
            guard reason == EWOULDBLOCK else {
                throw Refusal(folder: folder, description: "cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            throw Refusal(folder: folder, description: "the work folder \(folder) is in use by another perimeter-bench"
                + (holder.map { " (process \($0))" } ?? "")
                + "; wait for it to finish, or give this run a folder of its own with --work DIR")
        }
        descriptor = fd
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
    }

    /// Gives the folder back (also done by the kernel when the process ends).
    deinit { close(descriptor) }

    /// The process id the holder wrote into the lock file, if it reads as one.
    private static func recordedHolder(_ fd: Int32) -> Int32? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { return nil }
        return Int32(String(decoding: bytes[..<n], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
