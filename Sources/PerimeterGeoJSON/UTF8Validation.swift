/// Strict UTF-8 validation (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
enum UTF8Validation {
    /// The offset of the first byte that starts an invalid sequence, or `nil` when all `count` bytes are valid.
    /// - Complexity: O(count), no allocation.
    static func firstInvalidOffset(_ p: UnsafePointer<UInt8>, count: Int) -> Int? {
        var i = 0
        @inline(__always) func continuation(_ k: Int, _ low: UInt8 = 0x80, _ high: UInt8 = 0xBF) -> Bool {
            k < count && p[k] >= low && p[k] <= high
        }
        while i < count {
            let b = p[i]
            if b < 0x80 { i += 1; continue }
            switch b {
            case 0xC2...0xDF:
                guard continuation(i + 1) else { return i }
                i += 2
            case 0xE0:
                guard continuation(i + 1, 0xA0), continuation(i + 2) else { return i }
                i += 3
            case 0xE1...0xEC, 0xEE, 0xEF:
                guard continuation(i + 1), continuation(i + 2) else { return i }
                i += 3
            case 0xED:
                guard continuation(i + 1, 0x80, 0x9F), continuation(i + 2) else { return i }
                i += 3
            case 0xF0:
                guard continuation(i + 1, 0x90), continuation(i + 2), continuation(i + 3) else { return i }
                i += 4
            case 0xF1...0xF3:
                guard continuation(i + 1), continuation(i + 2), continuation(i + 3) else { return i }
                i += 4
            case 0xF4:
                guard continuation(i + 1, 0x80, 0x8F), continuation(i + 2), continuation(i + 3) else { return i }
                i += 4
            default:
                return i
            }
        }
        return nil
    }
}
