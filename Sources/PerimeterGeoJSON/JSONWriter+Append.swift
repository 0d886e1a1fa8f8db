import Foundation

/// Pieces of JSON text appended straight to a byte buffer, for writers of one fixed shape that skip the
/// ``JSONValue`` tree. Each writes exactly what ``JSONWriter/write(_:into:)`` writes for the same value.
extension JSONWriter {
    /// Appends `text` as a JSON string, quoted and escaped as ``JSONWriter`` does.
    /// - Complexity: O(length of `text`).
    public static func appendString(_ text: String, to output: inout [UInt8]) {
        JSONWriter().writeString(text, into: &output)
    }

    /// Appends an integer (what ``JSONWriter`` writes for ``JSONValue/integer(_:)``).
    public static func appendInteger(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, minimumWidth: 1, to: &output)
    }

    /// Appends a double (what ``JSONWriter`` writes for ``JSONValue/double(_:)``: ``format(_:)``, or `null`).
    public static func appendDouble(_ value: Double, to output: inout [UInt8]) {
        if appendShortDecimal(value, to: &output) { return }
        output.append(contentsOf: (format(value) ?? "null").utf8)
    }

    /// Appends the decimal digits of `value`, with leading zeros up to `minimumWidth` digits.
    static func appendDigits(_ value: UInt64, minimumWidth: Int, to output: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var rest = value
            var k = buffer.count
            repeat {
                k -= 1
                buffer[k] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            while buffer.count - k < minimumWidth && k > 0 {
                k -= 1
                buffer[k] = UInt8(ascii: "0")
            }
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[k...]))
        }
    }
}

extension RFC3339 {
    /// Appends ``string(from:)``'s text of `date` (UTC, milliseconds) as UTF-8, without building strings.
    /// - Complexity: O(1).
    public static func append(_ date: Date, to output: inout [UInt8]) {
        let totalMilliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        guard totalMilliseconds.isFinite, abs(totalMilliseconds) < 2.5e14 else {
            output.append(contentsOf: "invalid-date".utf8)
            return
        }
        let ms = Int64(totalMilliseconds)
        var days = ms / 86_400_000
        var rest = ms % 86_400_000
        if rest < 0 { rest += 86_400_000; days -= 1 }
        let (y, m, d) = civilFromDays(Int(days))
        func padded(_ value: Int, _ width: Int) {
            if value < 0 { output.append(UInt8(ascii: "-")) }
            JSONWriter.appendDigits(UInt64(value.magnitude), minimumWidth: width, to: &output)
        }
        padded(y, 4)
        output.append(UInt8(ascii: "-"))
        padded(m, 2)
        output.append(UInt8(ascii: "-"))
        padded(d, 2)
        output.append(UInt8(ascii: "T"))
        padded(Int(rest / 3_600_000), 2)
        output.append(UInt8(ascii: ":"))
        padded(Int(rest / 60_000 % 60), 2)
        output.append(UInt8(ascii: ":"))
        padded(Int(rest / 1000 % 60), 2)
        output.append(UInt8(ascii: "."))
        padded(Int(rest % 1000), 3)
        output.append(UInt8(ascii: "Z"))
    }
}
