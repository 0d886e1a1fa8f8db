/// The fast GeoJSON reader: UTF-8 bytes straight to the ``GeoJSON`` model, with precise diagnostics.
///
/// It does not use `JSONDecoder` or `JSONSerialization`: a byte-level tokenizer (shared with ``JSONParser``) feeds
/// a type-directed parser that writes coordinates directly into `[Position]` arrays, with no intermediate tree.
///
/// A feature with an error is reported and skipped; the others still load. Warnings leave the data as written.
/// A syntax error stops the read (`object` is `nil`). The reader never traps on any input.
public struct GeoJSONReader: Sendable {
    /// Limits for untrusted input.
    public struct Options: Sendable {
        /// The deepest nesting of arrays and objects accepted (deeper input is a syntax error).
        public var maxDepth: Int
        /// The most problems listed; further ones are counted in one final problem.
        public var maxProblems: Int

        /// Creates options.
        public init(maxDepth: Int = 256, maxProblems: Int = 1000) {
            self.maxDepth = maxDepth
            self.maxProblems = maxProblems
        }
    }

    /// The limits in use.
    public var options: Options

    /// Creates a reader.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Reads a GeoJSON object (FeatureCollection, Feature or geometry) from UTF-8 bytes.
    /// - Complexity: O(n) time; memory is the model plus one scratch array of positions.
    public func read(_ bytes: [UInt8]) -> GeoJSONReadResult {
        bytes.withUnsafeBytes { read($0) }
    }

    /// Reads a GeoJSON object from UTF-8 bytes in memory (e.g. a memory-mapped file).
    public func read(_ buffer: UnsafeRawBufferPointer) -> GeoJSONReadResult {
        guard let start = buffer.baseAddress, buffer.count > 0 else {
            let problem = GeoJSONProblem(severity: .error, message: "expected a GeoJSON object, found end of input",
                                         path: JSONPath(), offset: 0, line: 1, column: 1)
            return GeoJSONReadResult(object: nil, problems: [problem])
        }
        var parse = GeoJSONParse(base: start.assumingMemoryBound(to: UInt8.self), count: buffer.count, options: options)
        return parse.run()
    }
}
