import Foundation
import PerimeterEngine
import PerimeterGeometry

/// Reads NMEA 0183 logs: RMC and GGA sentences from any talker (GP, GN, GL, …), ZDA for dates.
///
/// - A sentence with a `*hh` checksum that does not match is skipped with a warning; a sentence without
///   a checksum is accepted.
/// - RMC and GGA sentences with the same time of day make one update (one per epoch) when they are at
///   most 8 epochs apart (logs do interleave them out of order); RMC gives the date (`ddmmyy`, years 80–99 → 19xx, else 20xx), speed (knots → m/s) and course.
///   A GGA-only epoch takes the date of the latest RMC/ZDA (rolling over at midnight); epochs before the
///   first date take it from the first date seen.
/// - Fixes that are not valid (RMC status `V`, GGA quality 0) are skipped; one warning gives their count.
/// - Other sentence types are ignored. Lines that are not sentences are skipped with a warning.
enum NMEAReader {
    private struct Epoch {
        var millisecond: Int
        var coordinate: Coordinate
        var fromRMC = false
        var day: Int?
        var speed: Double?
        var course: Double?
        var line: Int
    }

    /// How many recent epochs stay open for a matching RMC/GGA to merge into.
    static let mergeWindow = 8

    static func read(_ bytes: [UInt8], context: ReadContext) throws -> TrackReadResult {
        var log = ProblemLog(source: context.source)
        var updates = [LocationUpdate]()
        var pending = [Epoch]()  // recent epochs still open for merging (sentences can arrive out of order)
        var undated = [Epoch]()
        var lastDay: Int?
        var lastMillisecond = 0
        var invalid = 0, firstInvalidLine = 0
        var sentences = 0
        var line = 0
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0

        func emit(_ e: Epoch, day: Int) {
            let seconds = Double(day) * 86_400 + Double(e.millisecond) / 1000
            updates.append(LocationUpdate(device: context.defaultDevice, time: Date(timeIntervalSince1970: seconds),
                                          coordinate: e.coordinate, speed: e.speed, course: e.course))
        }
        /// Gives the epochs waiting for a date the date `day` known at time of day `millisecond`.
        func dateUndated(day: Int, millisecond: Int) {
            for u in undated { emit(u, day: u.millisecond > millisecond ? day - 1 : day) }
            undated.removeAll()
        }
        func flush(_ e: Epoch) {
            if let day = e.day {
                dateUndated(day: day, millisecond: e.millisecond)
                lastDay = day
                lastMillisecond = e.millisecond
                emit(e, day: day)
            } else if var day = lastDay {
                if e.millisecond < lastMillisecond - 43_200_000 { day += 1 }
                lastDay = day
                lastMillisecond = e.millisecond
                emit(e, day: day)
            } else {
                undated.append(e)
            }
        }

        while start < bytes.count {
            line += 1
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            defer { start = end + 1 }
            var last = end
            while last > start, bytes[last - 1] == 0x0D || bytes[last - 1] == 0x20 || bytes[last - 1] == 0x09 { last -= 1 }
            var first = start
            while first < last, bytes[first] == 0x20 || bytes[first] == 0x09 { first += 1 }
            guard first < last else { continue }
            guard bytes[first] == 0x24 || bytes[first] == 0x21 else {
                log.add(line: line, "not an NMEA sentence (does not start with '$'); line skipped")
                continue
            }
            var bodyEnd = last
            if let star = bytes[first..<last].lastIndex(of: 0x2A) {
                bodyEnd = star
                let given = String(decoding: bytes[(star + 1)..<last], as: UTF8.self)
                var sum: UInt8 = 0
                for c in bytes[(first + 1)..<star] { sum ^= c }
                guard given.count == 2, let value = UInt8(given, radix: 16) else {
                    log.add(line: line, column: star - start + 1, "checksum \"*\(given)\" is not two hex digits; sentence skipped")
                    continue
                }
                guard value == sum else {
                    log.add(line: line, column: star - start + 1,
                            "checksum *\(given) does not match the sentence (computed *\(String(format: "%02X", sum))); sentence skipped")
                    continue
                }
            }
            sentences += 1
            let fields = String(decoding: bytes[(first + 1)..<bodyEnd], as: UTF8.self)
                .split(separator: ",", omittingEmptySubsequences: false)
            let address = fields[0]
            guard address.count == 5, !address.hasPrefix("P") else { continue }
            let type = address.suffix(3)
            func skip(_ message: String) { log.add(line: line, "\(address): \(message); sentence skipped") }

            switch type {
            case "RMC", "GGA":
                let isRMC = type == "RMC"
                guard fields.count >= (isRMC ? 10 : 7) else { skip("has \(fields.count - 1) fields, expected at least \(isRMC ? 9 : 6)"); continue }
                if isRMC, fields[2] != "A" {
                    if fields[2] == "V" || fields[2].isEmpty {
                        invalid += 1; if firstInvalidLine == 0 { firstInvalidLine = line }
                    } else {
                        skip("status \"\(fields[2])\" is neither A nor V")
                    }
                    continue
                }
                if !isRMC {
                    guard let quality = Int(fields[6]) else { skip("fix quality \"\(fields[6])\" is not a number"); continue }
                    if quality == 0 { invalid += 1; if firstInvalidLine == 0 { firstInvalidLine = line }; continue }
                }
                guard let millisecond = timeOfDay(fields[1]) else { skip("time \"\(fields[1])\" is not hhmmss[.sss]"); continue }
                let base = isRMC ? 3 : 2
                guard let lat = angle(fields[base], hemisphere: fields[base + 1], degreeDigits: 2, positive: "N", negative: "S") else {
                    skip("latitude \"\(fields[base]),\(fields[base + 1])\" is not ddmm.mmmm,N|S"); continue
                }
                guard let lon = angle(fields[base + 2], hemisphere: fields[base + 3], degreeDigits: 3, positive: "E", negative: "W") else {
                    skip("longitude \"\(fields[base + 2]),\(fields[base + 3])\" is not dddmm.mmmm,E|W"); continue
                }
                var day: Int?, speed: Double?, course: Double?
                if isRMC {
                    guard let d = date(fields[9]) else { skip("date \"\(fields[9])\" is not ddmmyy"); continue }
                    day = d
                    if !fields[7].isEmpty {
                        guard let knots = TrackNumber.parse(fields[7]), knots >= 0 else { skip("speed \"\(fields[7])\" is not a number"); continue }
                        speed = knots * 1852 / 3600
                    }
                    if !fields[8].isEmpty {
                        guard let c = TrackNumber.parse(fields[8]), c >= 0 else { skip("course \"\(fields[8])\" is not a number"); continue }
                        course = c.truncatingRemainder(dividingBy: 360)
                    }
                }
                let coordinate = Coordinate(latitude: lat, longitude: lon)
                if let k = pending.firstIndex(where: { $0.millisecond == millisecond }) {
                    if isRMC {
                        pending[k].coordinate = coordinate; pending[k].fromRMC = true; pending[k].day = day
                        pending[k].speed = speed; pending[k].course = course
                    }
                } else {
                    pending.append(Epoch(millisecond: millisecond, coordinate: coordinate, fromRMC: isRMC, day: day,
                                         speed: speed, course: course, line: line))
                    if pending.count > mergeWindow { flush(pending.removeFirst()) }
                }
            case "ZDA":
                guard fields.count >= 5, let millisecond = timeOfDay(fields[1]),
                      let d = Int(fields[2]), let m = Int(fields[3]), let y = Int(fields[4]),
                      (1...12).contains(m), d >= 1, d <= TrackTime.daysInMonth(year: y, month: m) else {
                    skip("date or time is not valid"); continue
                }
                for e in pending { flush(e) }
                pending.removeAll()
                let day = TrackTime.daysSinceEpoch(year: y, month: m, day: d)
                dateUndated(day: day, millisecond: millisecond)
                lastDay = day
                lastMillisecond = millisecond
            default:
                continue
            }
        }
        for e in pending { flush(e) }
        if sentences == 0 {
            throw TrackProblem(source: context.source, message: log.problems.isEmpty
                ? "no NMEA sentences in the file" : "no NMEA sentence with a valid checksum in the file (\(log.problems.count) lines rejected, first: \(log.problems[0]))")
        }
        if let first = undated.first {
            throw TrackProblem(source: context.source, line: first.line, message:
                "no date: the fixes have only a time of day; NMEA needs RMC or ZDA sentences for the date")
        }
        if invalid > 0 {
            log.add(line: firstInvalidLine, "skipped \(invalid) sentence\(invalid == 1 ? "" : "s") without a valid fix (RMC status V or GGA quality 0), the first on this line")
        }
        return TrackReadResult(updates: updates, warnings: log.finished())
    }

    /// `hhmmss[.sss]` → milliseconds since midnight.
    static func timeOfDay(_ field: Substring) -> Int? {
        guard field.count >= 6, let value = TrackNumber.parse(field) else { return nil }
        let digits = Array(field.utf8.prefix(6))
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let h = Int(digits[0] - 0x30) * 10 + Int(digits[1] - 0x30)
        let m = Int(digits[2] - 0x30) * 10 + Int(digits[3] - 0x30)
        let s = Int(digits[4] - 0x30) * 10 + Int(digits[5] - 0x30)
        guard h < 24, m < 60, s < 61 else { return nil }
        let fraction = value - value.rounded(.down)
        return (h * 3600 + m * 60 + s) * 1000 + Int((fraction * 1000).rounded())
    }

    /// `ddmmyy` → days since 1970-01-01 (yy ≥ 80 → 19yy, else 20yy).
    static func date(_ field: Substring) -> Int? {
        let digits = Array(field.utf8)
        guard digits.count == 6, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let d = Int(digits[0] - 0x30) * 10 + Int(digits[1] - 0x30)
        let m = Int(digits[2] - 0x30) * 10 + Int(digits[3] - 0x30)
        let yy = Int(digits[4] - 0x30) * 10 + Int(digits[5] - 0x30)
        let y = yy >= 80 ? 1900 + yy : 2000 + yy
        guard (1...12).contains(m), d >= 1, d <= TrackTime.daysInMonth(year: y, month: m) else { return nil }
        return TrackTime.daysSinceEpoch(year: y, month: m, day: d)
    }

    /// `(d)ddmm.mmmm` plus hemisphere → signed degrees, checked against ±90 / ±180 and minutes < 60.
    static func angle(_ field: Substring, hemisphere: Substring, degreeDigits: Int, positive: String, negative: String) -> Double? {
        guard let value = TrackNumber.parse(field), value >= 0 else { return nil }
        let degrees = (value / 100).rounded(.down)
        let minutes = value - degrees * 100
        guard minutes < 60 else { return nil }
        let magnitude = degrees + minutes / 60
        guard magnitude <= (degreeDigits == 2 ? 90 : 180) else { return nil }
        if hemisphere == positive { return magnitude }
        if hemisphere == negative { return -magnitude }
        return nil
    }
}
