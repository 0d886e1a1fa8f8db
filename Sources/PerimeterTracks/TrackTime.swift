import Foundation

/// Time stamps as they appear in track files: ISO 8601 text or epoch numbers.
///
/// Rules (documented in docs/tracks.md):
/// - ISO 8601 extended format `YYYY-MM-DDThh:mm[:ss[.fff…]][Z|±hh[:mm]|±hhmm]`; `T` may be a space or `t`;
///   any number of fractional digits (`.` or `,`); no zone means UTC.
/// - A plain number is epoch time, its unit decided by magnitude: |v| < 10¹¹ → seconds,
///   |v| < 10¹⁴ → milliseconds, otherwise microseconds.
enum TrackTime {
    /// Parses ISO 8601 text, or a number as epoch time; `nil` if it is neither.
    static func parse(_ text: String) -> Date? {
        if let integer = integer(text) { return epoch(integer) }
        if let number = TrackNumber.parse(text) { return epoch(number) }
        return iso8601(text)
    }

    /// Epoch time from a number, with the unit chosen by magnitude; `nil` if not finite.
    static func epoch(_ value: Double) -> Date? {
        guard value.isFinite else { return nil }
        let magnitude = abs(value)
        let seconds = magnitude < 1e11 ? value : (magnitude < 1e14 ? value / 1e3 : value / 1e6)
        return Date(timeIntervalSince1970: seconds)
    }

    /// Epoch time from an integer, with the unit chosen by magnitude as for ``epoch(_:)-(Double)``. The shift
    /// to `Date`'s 2001 reference is done in integers, so the result is the `Date` nearest to the exact instant
    /// (for up to 2⁵³ units from 2001; beyond that whole seconds stay exact).
    static func epoch(_ value: Int64) -> Date {
        let magnitude = value.magnitude
        let unit: Int64 = magnitude < 100_000_000_000 ? 1 : (magnitude < 100_000_000_000_000 ? 1_000 : 1_000_000)
        let (fromReference, overflow) = value.subtractingReportingOverflow(978_307_200 * unit)
        if !overflow, fromReference.magnitude <= 1 << 53 {
            // Both operands exact: one correctly rounded division.
            return Date(timeIntervalSinceReferenceDate: Double(fromReference) / Double(unit))
        }
        let (seconds, fraction) = value.quotientAndRemainder(dividingBy: unit)
        return Date(timeIntervalSinceReferenceDate: Double(seconds - 978_307_200) + Double(fraction) / Double(unit))
    }

    /// Parses ISO 8601 date-time text; `nil` if it is not one.
    /// - Complexity: O(n), no allocation.
    static func iso8601(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parseISO($0) }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date.
    static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = month > 2 ? month - 3 : month + 9
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// Number of days in a month of the Gregorian calendar.
    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func parseISO(_ b: UnsafeBufferPointer<UInt8>) -> Date? {
        var start = 0, end = b.count
        while start < end, isSpace(b[start]) { start += 1 }
        while end > start, isSpace(b[end - 1]) { end -= 1 }
        var i = start

        func digits(_ n: Int) -> Int? {
            guard i + n <= end else { return nil }
            var value = 0
            for k in i..<(i + n) {
                let c = b[k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                value = value * 10 + Int(c - 0x30)
            }
            i += n
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < end, b[i] == c else { return false }
            i += 1
            return true
        }

        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month) else { return nil }
        guard i < end, b[i] == 0x54 || b[i] == 0x74 || b[i] == 0x20 else { return nil }
        i += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2) else { return nil }
        var second = 0.0
        if expect(0x3A) {
            guard let whole = digits(2) else { return nil }
            second = Double(whole)
            if i < end, b[i] == 0x2E || b[i] == 0x2C {
                i += 1
                var fraction = 0.0, scale = 1.0, count = 0
                while i < end, b[i] >= 0x30, b[i] <= 0x39 {
                    if count < 17 { fraction = fraction * 10 + Double(b[i] - 0x30); scale *= 10 }
                    count += 1
                    i += 1
                }
                guard count > 0 else { return nil }
                second += fraction / scale
            }
        }
        guard hour <= 23 || (hour == 24 && minute == 0 && second == 0), minute <= 59, second < 61 else { return nil }
        var offsetSeconds = 0
        if i < end {
            switch b[i] {
            case 0x5A, 0x7A: i += 1
            case 0x2B, 0x2D:
                let sign = b[i] == 0x2D ? -1 : 1
                i += 1
                guard let offHour = digits(2), offHour <= 23 else { return nil }
                var offMinute = 0
                if i < end {
                    _ = expect(0x3A)
                    guard let m = digits(2), m <= 59 else { return nil }
                    offMinute = m
                }
                offsetSeconds = sign * (offHour * 3600 + offMinute * 60)
            default: return nil
            }
        }
        guard i == end else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let whole = Double(days * 86_400 + hour * 3600 + minute * 60 - offsetSeconds)
        return Date(timeIntervalSince1970: whole + second)
    }

    /// The text as a decimal `Int64` (surrounding spaces ignored), so integer epochs are read exactly.
    private static func integer(_ text: String) -> Int64? {
        var digits = Substring(text)
        while let first = digits.utf8.first, isSpace(first) { digits = digits.dropFirst() }
        while let last = digits.utf8.last, isSpace(last) { digits = digits.dropLast() }
        return Int64(digits, radix: 10)
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D }
}
