import Foundation
import PerimeterEngine

/// Reads location updates from track files: GPX, NMEA 0183, CSV, NDJSON and GeoJSON.
///
/// The reader does no I/O: give it the bytes and a source name (the file name), which names the
/// default device and appears in every problem report. Updates come out in file order.
///
/// Device ids: a record's own device field (CSV, NDJSON, GeoJSON properties), else the `device` given
/// here, else the source's file name without extension.
public struct TrackReader: Sendable {
    /// The format to read, or `nil` to detect it from the source's extension or the content.
    public var format: TrackFormat?
    /// The device id for records that do not name one; `nil` means the source name without extension.
    public var device: DeviceID?
    /// Timing for inputs without times (GPX points without `<time>`, GeoJSON lines without times).
    /// Inputs that have times keep them.
    public var simulation: TrackSimulation?

    /// Creates a reader.
    public init(format: TrackFormat? = nil, device: DeviceID? = nil, simulation: TrackSimulation? = nil) {
        self.format = format
        self.device = device
        self.simulation = simulation
    }

    /// Reads all updates from `bytes`, named `source`.
    /// - Throws: ``TrackProblem`` when the input is unusable as a whole (empty, unknown format, malformed
    ///   XML or JSON document, missing required CSV columns, no timestamps and no simulation, …).
    /// - Complexity: O(n) in the input size, one pass (GeoJSON: one JSON parse of the document).
    public func read(_ bytes: [UInt8], source: String) throws -> TrackReadResult {
        let meaningful = bytes.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }
        guard meaningful else {
            throw TrackProblem(source: source, message: bytes.isEmpty ? "the file is empty" : "the file holds only white space")
        }
        let format = try self.format ?? TrackFormat.detect(source: source, bytes: bytes)
        let context = ReadContext(source: source, defaultDevice: device ?? SourceName.defaultDevice(for: source),
                                  simulation: simulation)
        switch format {
        case .gpx: return try GPXReader.read(bytes, context: context)
        case .nmea: return try NMEAReader.read(bytes, context: context)
        case .csv: return try CSVReader.read(bytes, context: context)
        case .ndjson: return try NDJSONReader.read(bytes, context: context)
        case .geojson: return try GeoJSONTrackReader.read(bytes, context: context)
        }
    }

    /// Reads all updates from `data`, named `source` (see ``read(_:source:)-(UInt8,_)``).
    public func read(_ data: Data, source: String) throws -> TrackReadResult {
        try read([UInt8](data), source: source)
    }
}

/// What every format reader needs besides the bytes.
struct ReadContext {
    let source: String
    let defaultDevice: DeviceID
    let simulation: TrackSimulation?
}
