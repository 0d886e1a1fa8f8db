import PerimeterEngine

/// Helpers for the source name given to a reader.
enum SourceName {
    /// The last path component.
    static func fileName(of source: String) -> Substring {
        if let slash = source.lastIndex(where: { $0 == "/" || $0 == "\\" }) {
            return source[source.index(after: slash)...]
        }
        return source[...]
    }

    /// The extension of the last path component, without the dot ("" when none).
    static func fileExtension(of source: String) -> String {
        let name = fileName(of: source)
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...])
    }

    /// The default device id: the file name without its extension (`a/b/ride.gpx` → `ride`).
    static func defaultDevice(for source: String) -> DeviceID {
        let name = fileName(of: source)
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return DeviceID(String(name[..<dot]))
        }
        return DeviceID(name.isEmpty ? source : String(name))
    }
}
