import Foundation

/// Where a command writes: standard output for results, standard error for diagnostics and progress.
///
/// Tests pass a console that collects the text; the executable uses ``standard``.
public struct Console: Sendable {
    /// Writes result text (no newline added).
    public var output: @Sendable (String) -> Void
    /// Writes diagnostics (no newline added).
    public var error: @Sendable (String) -> Void
    /// Whether standard error is a terminal (progress bars are drawn only then).
    public var errorIsTerminal: Bool

    /// Creates a console from two writers.
    public init(output: @escaping @Sendable (String) -> Void, error: @escaping @Sendable (String) -> Void,
                errorIsTerminal: Bool = false) {
        self.output = output
        self.error = error
        self.errorIsTerminal = errorIsTerminal
    }

    /// The process's standard output and standard error.
    public static var standard: Console {
        Console(output: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
                error: { text in FileHandle.standardError.write(Data(text.utf8)) },
                errorIsTerminal: isatty(2) == 1)
    }

    /// Writes a line of result text.
    func print(_ line: String) { output(line + "\n") }

    /// Writes a line of diagnostics prefixed with `perimeter: `.
    func complain(_ line: String) { error("perimeter: " + line + "\n") }
}
