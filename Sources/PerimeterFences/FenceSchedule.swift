import Foundation

/// Weekly windows in which a fence is active, in a local time given by an explicit UTC offset.
///
/// Text form (the `perimeter:schedule` property): comma-separated windows, then the offset, e.g.
/// `"Mon-Fri 08:00-18:00, Sat 09:00-12:30 UTC+02:00"`. Days are `Mon`…`Sun`, a range `Mon-Fri`
/// (wrapping, `Fri-Mon`), or `daily`; a window ending at or before its start runs past midnight
/// (`Fri 22:00-02:00` ends Saturday 02:00); `24:00` is the end of the day. The offset (`UTC`,
/// `UTC+05:30`, `UTC-08:00`) is required so a schedule never depends on the machine's time zone.
/// A window includes its start and excludes its end.
public struct FenceSchedule: Hashable, Sendable, CustomStringConvertible {
    /// One weekly window: from `start` minutes after Monday 00:00 local time, for `duration` minutes.
    public struct Window: Hashable, Sendable {
        /// Minutes after Monday 00:00 (local), 0 ..< 10080.
        public var start: Int
        /// Length in minutes, 1 ... 10080.
        public var duration: Int

        /// Creates a window.
        public init(start: Int, duration: Int) {
            self.start = start
            self.duration = duration
        }
    }

    /// Local time = UTC + this many seconds.
    public var utcOffset: Int
    /// The windows, as given.
    public var windows: [Window]
    /// The text the schedule was parsed from (or a synthesised one).
    public var description: String

    private static let week = 604_800.0
    /// 1970-01-05T00:00:00Z, a Monday.
    private static let mondayEpoch = 345_600.0

    /// Creates a schedule from windows and an offset.
    public init(windows: [Window], utcOffset: Int, description: String = "") {
        self.windows = windows
        self.utcOffset = utcOffset
        self.description = description.isEmpty ? "\(windows.count) weekly windows, UTC offset \(utcOffset) s" : description
    }

    /// Why a schedule text could not be read.
    public struct ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        /// What is wrong, naming the offending part.
        public var description: String
    }

    /// Parses the text form (see the type's documentation).
    public static func parse(_ text: String) -> Result<FenceSchedule, ParseError> {
        func fail(_ message: String) -> Result<FenceSchedule, ParseError> { .failure(ParseError(description: message)) }
        var body = text.trimmingCharacters(in: .whitespaces)
        guard let utcRange = body.range(of: "UTC", options: [.backwards, .caseInsensitive]) else {
            return fail("schedule \"\(text)\" needs an explicit UTC offset at the end, e.g. \"UTC+02:00\" or \"UTC\"")
        }
        let offsetText = body[utcRange.upperBound...].trimmingCharacters(in: .whitespaces)
        var offset = 0
        if !offsetText.isEmpty {
            guard let sign = offsetText.first, sign == "+" || sign == "-",
                  let minutes = minutesOfDay(String(offsetText.dropFirst())), minutes <= 14 * 60 else {
                return fail("UTC offset \"\(offsetText)\" must look like +02:00 or -05:30 (at most 14 hours)")
            }
            offset = (sign == "-" ? -1 : 1) * minutes * 60
        }
        body = String(body[..<utcRange.lowerBound]).trimmingCharacters(in: .whitespaces)
        var windows: [Window] = []
        for part in body.split(separator: ",") {
            let fields = part.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count == 2 else {
                return fail("window \"\(part.trimmingCharacters(in: .whitespaces))\" must be DAYS HH:MM-HH:MM, e.g. \"Mon-Fri 08:00-18:00\"")
            }
            guard let days = weekdays(String(fields[0])) else {
                return fail("days \"\(fields[0])\" must be Mon…Sun, a range such as Mon-Fri, or daily")
            }
            let times = fields[1].split(separator: "-")
            guard times.count == 2, let from = minutesOfDay(String(times[0])), let to = minutesOfDay(String(times[1])),
                  from < 1440 else {
                return fail("times \"\(fields[1])\" must be HH:MM-HH:MM (00:00 to 24:00)")
            }
            let duration = to > from ? to - from : to + 1440 - from
            for day in days { windows.append(Window(start: day * 1440 + from, duration: duration)) }
        }
        guard !windows.isEmpty else { return fail("schedule \"\(text)\" has no windows") }
        return .success(FenceSchedule(windows: windows, utcOffset: offset, description: text))
    }

    /// `HH:MM` as minutes, 0 ... 1440.
    private static func minutesOfDay(_ text: String) -> Int? {
        let parts = text.split(separator: ":")
        guard parts.count == 2, parts[0].count <= 2, parts[1].count == 2,
              let h = Int(parts[0]), let m = Int(parts[1]), (0...24).contains(h), (0..<60).contains(m),
              h * 60 + m <= 1440 else { return nil }
        return h * 60 + m
    }

    /// Day indices (0 = Monday) for `Mon`, `Mon-Fri` or `daily`.
    private static func weekdays(_ text: String) -> [Int]? {
        let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
        let lower = text.lowercased()
        if lower == "daily" { return Array(0..<7) }
        let ends = lower.split(separator: "-").map(String.init)
        guard (1...2).contains(ends.count), let first = names.firstIndex(of: ends[0]),
              let last = names.firstIndex(of: ends[ends.count - 1]) else { return nil }
        var days = [first]
        var day = first
        while day != last { day = (day + 1) % 7; days.append(day) }
        return days
    }

    /// Seconds since Monday 00:00 local time of the week holding `t` (seconds since 1970).
    private func weekPosition(_ t: Double) -> Double {
        let local = t + Double(utcOffset) - Self.mondayEpoch
        let r = local.truncatingRemainder(dividingBy: Self.week)
        return r < 0 ? r + Self.week : r
    }

    /// Whether the fence is active at `t` (seconds since 1970).
    /// - Complexity: O(windows).
    public func isActive(at t: Double) -> Bool {
        guard t.isFinite else { return false }
        let p = weekPosition(t)
        for w in windows {
            let s = Double(w.start) * 60, e = s + Double(w.duration) * 60
            if (p >= s && p < e) || (p + Self.week >= s && p + Self.week < e) { return true }
        }
        return false
    }

    /// The first moment at or after `t` at which the fence is inactive: `t` itself when it is inactive
    /// at `t`, `.infinity` when the windows cover the whole week.
    /// - Complexity: O(windows²).
    public func activeUntil(_ t: Double) -> Double {
        var end = t
        // Each step jumps to the end of a window holding `end`; at most one step per window.
        for _ in 0...windows.count {
            guard isActive(at: end) else { return end }
            let p = weekPosition(end)
            var furthest = 0.0
            for w in windows {
                let s = Double(w.start) * 60, e = s + Double(w.duration) * 60
                if p >= s && p < e { furthest = max(furthest, e - p) }
                if p + Self.week >= s && p + Self.week < e { furthest = max(furthest, e - p - Self.week) }
            }
            end += furthest
        }
        return isActive(at: end) ? .infinity : end
    }
}
