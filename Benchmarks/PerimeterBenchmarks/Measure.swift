import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Clocks, repeated runs and heap figures.
public enum Measure {
    /// CPU seconds used by this process (the measured process is pinned to one core).
    public static func cpuSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }

    /// Monotonic wall-clock seconds.
    public static func wallSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) * 1e-9
    }

    /// The median of `samples` (mean of the middle two for an even count); 0 when empty.
    public static func median(_ samples: [Double]) -> Double {
        let s = samples.sorted()
        guard !s.isEmpty else { return 0 }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Runs `body` `runs` times and returns the median CPU seconds (and the last run's result).
    public static func repeated<T>(runs: Int, _ body: () -> T) -> (seconds: Double, samples: [Double], result: T) {
        var samples: [Double] = []
        var last: T? = nil
        for _ in 0..<max(1, runs) {
            let t0 = cpuSeconds()
            let r = body()
            samples.append(cpuSeconds() - t0)
            last = r
        }
        return (median(samples), samples, last!)  // runs ≥ 1, so `last` is set
    }

    /// Bytes currently allocated on the heap: glibc's `mallinfo2()` (in-use blocks + mmapped blocks),
    /// or the resident set size where that is unavailable.
    ///
    /// `mallinfo2` is not exported by Swift's Glibc module, so it is looked up with `dlsym`. It returns a
    /// 10-word struct, which the x86-64 System V ABI returns through a hidden pointer in the first
    /// argument register: on x86-64 it is therefore called as `void f(struct mallinfo2 *)`.
    public static func heapBytes() -> Int {
        #if arch(x86_64) && canImport(Glibc)
        typealias Fn = @convention(c) (UnsafeMutableRawPointer) -> UnsafeMutableRawPointer?
        if let symbol = dlsym(nil, "mallinfo2") {  // nil is RTLD_DEFAULT
            var words = [Int](repeating: 0, count: 10)
            _ = words.withUnsafeMutableBytes { unsafeBitCast(symbol, to: Fn.self)($0.baseAddress!) }
            return words[7] + words[4]  // uordblks + hblkhd
        }
        #endif
        return residentBytes()
    }

    /// Current resident set size in bytes (`/proc/self/statm`), or 0 when unknown.
    public static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Peak resident set size of this process in bytes (`VmHWM`), or 0 when unknown.
    public static func peakResidentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kb * 1024
        }
        return 0
    }
}
