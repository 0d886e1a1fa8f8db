import PerimeterGeoJSON

/// The track file formats Perimeter reads.
public enum TrackFormat: String, CaseIterable, Hashable, Sendable {
    /// GPX 1.0 / 1.1 (track points, else route points, else waypoints).
    case gpx
    /// NMEA 0183 sentences (RMC and GGA, any talker).
    case nmea
    /// Delimited text with a header row (`,` `;` or tab).
    case csv
    /// One JSON object per line.
    case ndjson
    /// A GeoJSON document whose lines (or points) are the track.
    case geojson

    /// The format a file extension names (case-insensitive, without the dot), or `nil`.
    ///
    /// `gpx`; `nmea`, `nme`, `nma`; `csv`, `tsv`; `ndjson`, `jsonl`; `geojson`. `json` is not mapped
    /// (it can be GeoJSON or NDJSON): such files are sniffed.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "gpx": self = .gpx
        case "nmea", "nme", "nma": self = .nmea
        case "csv", "tsv": self = .csv
        case "ndjson", "jsonl": self = .ndjson
        case "geojson": self = .geojson
        default: return nil
        }
    }

    /// The format of `bytes` named `source`: from the extension when it names one, else sniffed.
    /// - Throws: ``TrackProblem`` when neither the extension nor the content tells.
    /// - Complexity: O(length of the first line or two).
    public static func detect(source: String, bytes: [UInt8]) throws -> TrackFormat {
        let ext = SourceName.fileExtension(of: source)
        if let format = TrackFormat(fileExtension: ext) { return format }
        if let format = sniff(bytes) { return format }
        let named = ext.isEmpty ? "it has no extension" : "the extension \".\(ext)\" is not one of gpx, nmea, csv, tsv, ndjson, jsonl, geojson"
        throw TrackProblem(source: source, message:
            "cannot tell the track format: \(named), and the content looks like none of GPX, NMEA, CSV, NDJSON or GeoJSON")
    }

    /// Guesses the format from the first bytes: `<` → GPX, `$`/`!` → NMEA, `{` → NDJSON when the first
    /// line is a whole JSON object that is not a GeoJSON document with more lines following it, else
    /// GeoJSON; a header row with latitude and longitude columns → CSV. `nil` when nothing fits.
    public static func sniff(_ bytes: [UInt8]) -> TrackFormat? {
        var i = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
        guard i < bytes.count else { return nil }
        switch bytes[i] {
        case UInt8(ascii: "<"): return .gpx
        case UInt8(ascii: "$"), UInt8(ascii: "!"): return .nmea
        case UInt8(ascii: "{"):
            let lineEnd = bytes[i...].firstIndex(of: 0x0A) ?? bytes.count
            let firstLine = bytes.withUnsafeBytes { buffer in
                try? JSONParser().parse(UnsafeRawBufferPointer(rebasing: buffer[i..<lineEnd]))
            }
            guard case .object? = firstLine else { return .geojson }
            let rest = bytes[lineEnd...].contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }
            if !rest, let type = firstLine?["type"]?.stringValue, GeoJSONTrackReader.documentTypes.contains(type) { return .geojson }
            return .ndjson
        default:
            let lineEnd = bytes[i...].firstIndex(of: 0x0A) ?? bytes.count
            let header = String(decoding: bytes[i..<lineEnd], as: UTF8.self)
            return CSVReader.looksLikeHeader(header) ? .csv : nil
        }
    }
}
