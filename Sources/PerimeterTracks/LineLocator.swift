/// Turns byte offsets into 1-based line and column numbers in one forward pass.
///
/// Queries are expected in increasing offset order (each costs the bytes since the previous one);
/// an earlier offset restarts from the beginning, which only happens on error paths.
struct LineLocator {
    private let bytes: [UInt8]
    private var offset = 0
    private var line = 1
    private var lineStart = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Line and column (both 1-based, column in bytes) of the byte at `target`.
    /// - Complexity: O(target − previous target), amortised O(1) per byte over a whole file.
    mutating func position(of target: Int) -> (line: Int, column: Int) {
        let target = max(0, min(target, bytes.count))
        if target < offset { offset = 0; line = 1; lineStart = 0 }
        var i = offset
        while i < target {
            if bytes[i] == 0x0A { line += 1; lineStart = i + 1 }
            i += 1
        }
        offset = target
        return (line, target - lineStart + 1)
    }
}
