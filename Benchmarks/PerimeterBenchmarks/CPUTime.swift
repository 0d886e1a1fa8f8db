import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// User and system CPU time of a process, for CPU-per-request figures of a server and its client.
public struct CPUTime: Sendable, Equatable {
    /// User-mode seconds.
    public var user: Double
    /// Kernel-mode seconds.
    public var system: Double

    /// User plus system seconds.
    public var total: Double { user + system }

    /// A time from its two parts.
    public init(user: Double, system: Double) {
        self.user = user
        self.system = system
    }

    /// The times in a `rusage` (`getrusage`, `wait4`).
    public init(_ usage: rusage) {
        user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) * 1e-6
        system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) * 1e-6
    }

    /// This process so far, every thread included (`getrusage(RUSAGE_SELF)`).
    public static func ofSelf() -> CPUTime {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return CPUTime(usage)
    }

    /// Process `pid` so far, from `utime` and `stime` in `/proc/<pid>/stat` (clock ticks, usually 10 ms);
    /// `nil` when it cannot be read (no such process, no `/proc`).
    public static func of(pid: pid_t) -> CPUTime? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return nil }
        return parse(stat: stat)
    }

    /// Reads `/proc/<pid>/stat`'s text: fields 14 and 15 (`utime`, `stime`), counted after the command
    /// name in parentheses, which may itself contain spaces and parentheses.
    static func parse(stat: String) -> CPUTime? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state), so utime (14) and stime (15) are fields[11] and fields[12].
        guard fields.count > 12, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return nil }
        let ticks = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        return CPUTime(user: utime / ticks, system: stime / ticks)
    }

    /// The time spent between `earlier` and this.
    public static func - (later: CPUTime, earlier: CPUTime) -> CPUTime {
        CPUTime(user: later.user - earlier.user, system: later.system - earlier.system)
    }

    /// This time divided among `count` requests (zero for no request).
    public func per(_ count: Int) -> CPUTime {
        count > 0 ? CPUTime(user: user / Double(count), system: system / Double(count)) : CPUTime(user: 0, system: 0)
    }

    /// `62 µs (user 40, sys 22)` for a per-request time (one decimal below 20 µs).
    public var microseconds: String {
        let format = total < 20e-6 ? "%.1f µs (user %.1f, sys %.1f)" : "%.0f µs (user %.0f, sys %.0f)"
        return String(format: format, total * 1e6, user * 1e6, system * 1e6)
    }

    /// The time with the median total of `times` (the lower middle one for an even count); `nil` when empty.
    public static func median(_ times: [CPUTime]) -> CPUTime? {
        let sorted = times.sorted { $0.total < $1.total }
        return sorted.isEmpty ? nil : sorted[(sorted.count - 1) / 2]
    }
}
