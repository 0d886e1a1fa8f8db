import Foundation

/// A problem found while reading a track: where it is (source, line, column) and what is wrong.
///
/// Thrown when it makes the whole input unusable; otherwise reported in ``TrackReadResult/warnings``
/// for a record that was skipped or a field that was ignored. Its description reads like a compiler
/// diagnostic, e.g. `bike.gpx:120:7: <trkpt> has lat="abc", not a number`.
public struct TrackProblem: Error, Hashable, Sendable, CustomStringConvertible, LocalizedError {
    /// The source name given to the reader (usually the file name).
    public var source: String
    /// The 1-based line the problem is on, when it is tied to one.
    public var line: Int?
    /// The 1-based column (in bytes of UTF-8) on that line, when known.
    public var column: Int?
    /// What is wrong, in plain words.
    public var message: String

    /// Creates a problem report.
    public init(source: String, line: Int? = nil, column: Int? = nil, message: String) {
        self.source = source
        self.line = line
        self.column = column
        self.message = message
    }

    /// `source:line:column: message`, leaving out the parts that are not known.
    public var description: String {
        var text = source
        if let line {
            text += ":\(line)"
            if let column { text += ":\(column)" }
        }
        return text + ": " + message
    }

    /// Same as ``description``.
    public var errorDescription: String? { description }
}
