import Foundation

/// Independent (regex and Calendar based) readings of fixture files, to check the readers against.
enum Independent {
    /// Parses `YYYY-MM-DD[T ]hh:mm:ss[.f][Z|±hh:mm]` with a regex and Calendar (UTC when no zone).
    static func time(_ text: String) -> Date? {
        let pattern = #"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$"#
        guard let m = try? NSRegularExpression(pattern: pattern).firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) else { return nil }
        func group(_ i: Int) -> String? {
            guard let r = Range(m.range(at: i), in: text) else { return nil }
            return String(text[r])
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var c = DateComponents()
        c.year = Int(group(1)!); c.month = Int(group(2)!); c.day = Int(group(3)!)
        c.hour = Int(group(4)!); c.minute = Int(group(5)!); c.second = Int(group(6)!)
        guard var date = calendar.date(from: c) else { return nil }
        if let f = group(7) { date += Double("0" + f)! }
        if let z = group(8), z != "Z" {
            let sign: Double = z.hasPrefix("-") ? -1 : 1
            let h = Double(z.dropFirst().prefix(2))!, mm = Double(z.suffix(2))!
            date -= sign * (h * 3600 + mm * 60)
        }
        return date
    }

    struct Point { var lat: Double; var lon: Double; var time: Date? }

    /// All `<tag …>…</tag>` (or self-closing) elements with their lat/lon attributes and `<time>`.
    static func gpxPoints(_ text: String, tag: String) -> [Point] {
        let element = try! NSRegularExpression(pattern: "<\(tag)\\b([^>]*?)(/>|>(.*?)</\(tag)>)", options: [.dotMatchesLineSeparators])
        let latRx = try! NSRegularExpression(pattern: #"\blat\s*=\s*["']([^"']*)["']"#)
        let lonRx = try! NSRegularExpression(pattern: #"\blon\s*=\s*["']([^"']*)["']"#)
        let timeRx = try! NSRegularExpression(pattern: #"<time>\s*([^<]*?)\s*</time>"#)
        func first(_ rx: NSRegularExpression, _ s: String) -> String? {
            guard let m = rx.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)), let r = Range(m.range(at: 1), in: s) else { return nil }
            return String(s[r])
        }
        return element.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { m in
            let attrs = String(text[Range(m.range(at: 1), in: text)!])
            let body = Range(m.range(at: 3), in: text).map { String(text[$0]) } ?? ""
            guard let lat = first(latRx, attrs).flatMap(Double.init), let lon = first(lonRx, attrs).flatMap(Double.init) else { return nil }
            return Point(lat: lat, lon: lon, time: first(timeRx, body).flatMap(time))
        }
    }
}
