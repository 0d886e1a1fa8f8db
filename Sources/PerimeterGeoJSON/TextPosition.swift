/// Turns byte offsets into 1-based lines and columns.
enum TextPosition {
    /// The line and column of each offset (in the order given), found in one pass over the bytes up to the largest.
    /// Columns count Unicode scalars (UTF-8 continuation bytes are not counted).
    /// - Complexity: O(n + k log k) for n bytes and k offsets.
    static func lineColumns(of offsets: [Int], in base: UnsafePointer<UInt8>, count: Int) -> [(line: Int, column: Int)] {
        var result = [(line: Int, column: Int)](repeating: (1, 1), count: offsets.count)
        let order = offsets.indices.sorted { offsets[$0] < offsets[$1] }
        var line = 1, column = 1, position = 0
        for k in order {
            let target = min(max(offsets[k], 0), count)
            while position < target {
                let b = base[position]
                if b == 0x0A {
                    line += 1
                    column = 1
                } else if b & 0xC0 != 0x80 {
                    column += 1
                }
                position += 1
            }
            result[k] = (line, column)
        }
        return result
    }
}
