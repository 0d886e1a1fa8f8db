import Foundation
import PerimeterEngine

/// Reads delimited text with a header row (see docs/tracks.md for the column aliases).
///
/// The separator (`,`, `;` or tab) is the one that occurs most often in the header line outside quotes.
/// Fields may be quoted with `"` (a doubled `""` inside is one quote; quoted fields may span lines).
/// A row whose field count differs from the header's, or whose required fields are missing or invalid,
/// is skipped with a warning naming its line.
enum CSVReader {
    /// Whether `line` looks like a CSV header: it has a latitude and a longitude column.
    static func looksLikeHeader(_ line: String) -> Bool {
        let bytes = Array(line.utf8)
        let separator = detectSeparator(bytes[...])
        let names = splitSimple(bytes[...], separator: separator)
        let roles = Set(names.compactMap { FieldRole.role(forName: $0) })
        return names.count >= 3 && roles.contains(.latitude) && roles.contains(.longitude)
    }

    static func read(_ bytes: [UInt8], context: ReadContext) throws -> TrackReadResult {
        var log = ProblemLog(source: context.source)
        var scanner = Scanner(bytes: bytes)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { scanner.index = 3 }
        // Header: the first line that is not blank.
        var headerLine = 1
        var headerEnd = scanner.index
        while true {
            let lineStart = scanner.index
            headerEnd = bytes[lineStart...].firstIndex(of: 0x0A) ?? bytes.count
            let content = bytes[lineStart..<headerEnd]
            if content.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) { break }
            guard headerEnd < bytes.count else {
                throw TrackProblem(source: context.source, message: "the file has no header row")
            }
            scanner.index = headerEnd + 1
            scanner.line += 1
            headerLine += 1
        }
        scanner.separator = detectSeparator(bytes[scanner.index..<headerEnd])
        guard let header = scanner.nextRecord() else {
            throw TrackProblem(source: context.source, line: headerLine, message: "the file has no header row")
        }
        if let problem = scanner.problem {
            throw TrackProblem(source: context.source, line: problem.line, column: problem.column, message: problem.message)
        }
        let names = header.fields.map { String(decoding: bytes[$0], as: UTF8.self) }
        var columns = [Int?](repeating: nil, count: FieldRole.allCases.count)
        for role in FieldRole.allCases {
            for alias in role.aliases {
                if let index = names.firstIndex(where: { FieldRole.normalise($0) == alias }) {
                    columns[role.rawValue] = index
                    break
                }
            }
        }
        let missing = [FieldRole.time, .latitude, .longitude].filter { columns[$0.rawValue] == nil }
        if !missing.isEmpty {
            let separatorName = scanner.separator == 0x09 ? "tab" : "'\(Character(Unicode.Scalar(scanner.separator)))'"
            throw TrackProblem(source: context.source, line: headerLine, message:
                "the header has no \(missing.map(\.displayName).joined(separator: ", ")) column (columns found, separated by \(separatorName): \(names.map { "\"\($0)\"" }.joined(separator: ", ")); accepted names are in docs/tracks.md)")
        }
        var updates = [LocationUpdate]()
        var values = [FieldValue?](repeating: nil, count: FieldRole.allCases.count)
        var notes = [FieldProblem]()
        while let record = scanner.nextRecord() {
            if let problem = scanner.problem {
                log.add(line: problem.line, column: problem.column, problem.message)
                break
            }
            // A blank line is no record.
            if record.fields.count == 1, bytes[record.fields[0]].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
            guard record.fields.count == names.count else {
                log.add(line: record.line, "row has \(record.fields.count) fields but the header has \(names.count); row skipped")
                continue
            }
            for role in FieldRole.allCases {
                if let column = columns[role.rawValue] {
                    values[role.rawValue] = .text(scanner.text(record.fields[column], quoted: record.quoted[column]))
                } else {
                    values[role.rawValue] = nil
                }
            }
            notes.removeAll(keepingCapacity: true)
            let result = RecordBuilder.update(values, defaultDevice: context.defaultDevice, notes: &notes)
            for note in notes {
                log.add(line: record.line, column: column(of: note, record: record, columns: columns), note.message)
            }
            switch result {
            case .success(let update): updates.append(update)
            case .failure(let problem):
                log.add(line: record.line, column: column(of: problem, record: record, columns: columns), problem.message + "; row skipped")
            }
        }
        return TrackReadResult(updates: updates, warnings: log.finished())
    }

    private static func column(of problem: FieldProblem, record: Record, columns: [Int?]) -> Int? {
        guard let role = problem.role, let index = columns[role.rawValue], index < record.columns.count else { return nil }
        return record.columns[index]
    }

    /// The separator that occurs most often outside quotes (`,` on ties or when none occurs).
    static func detectSeparator(_ line: ArraySlice<UInt8>) -> UInt8 {
        var counts = [UInt8(ascii: ","): 0, UInt8(ascii: ";"): 0, 0x09: 0]
        var inQuotes = false
        for c in line {
            if c == 0x22 { inQuotes.toggle() } else if !inQuotes, counts[c] != nil { counts[c, default: 0] += 1 }
        }
        var best = UInt8(ascii: ","), bestCount = counts[best] ?? 0
        for c in [UInt8(ascii: ";"), 0x09] where (counts[c] ?? 0) > bestCount { best = c; bestCount = counts[c] ?? 0 }
        return best
    }

    /// Splits a header line naïvely (quotes removed), for sniffing.
    static func splitSimple(_ line: ArraySlice<UInt8>, separator: UInt8) -> [String] {
        line.split(separator: separator, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\"")))
        }
    }

    /// One record: byte ranges of its fields (quotes excluded), whether each was quoted, and where it is.
    struct Record {
        var fields: [Range<Int>] = []
        var quoted: [Bool] = []
        var columns: [Int] = []
        var line = 1
    }

    /// A one-pass record scanner over the bytes.
    struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        var lineStart = 0
        var separator = UInt8(ascii: ",")
        var problem: (line: Int, column: Int, message: String)?
        private var record = Record()

        init(bytes: [UInt8]) { self.bytes = bytes }

        /// The next record, or `nil` at the end of the input. Sets `problem` for an unterminated quote.
        /// - Complexity: O(record length).
        mutating func nextRecord() -> Record? {
            guard index < bytes.count, problem == nil else { return nil }
            record.fields.removeAll(keepingCapacity: true)
            record.quoted.removeAll(keepingCapacity: true)
            record.columns.removeAll(keepingCapacity: true)
            record.line = line
            let count = bytes.count
            while true {
                record.columns.append(index - lineStart + 1)
                if index < count, bytes[index] == 0x22 {
                    let openLine = line, openColumn = index - lineStart + 1
                    index += 1
                    let start = index
                    var closed = false
                    while index < count {
                        let c = bytes[index]
                        if c == 0x22 {
                            if index + 1 < count, bytes[index + 1] == 0x22 { index += 2; continue }
                            closed = true
                            break
                        }
                        if c == 0x0A { line += 1; lineStart = index + 1 }
                        index += 1
                    }
                    guard closed else {
                        problem = (openLine, openColumn, "quoted field is never closed; rest of the file skipped")
                        return record
                    }
                    record.fields.append(start..<index)
                    record.quoted.append(true)
                    index += 1
                    // Skip anything up to the separator or end of line (tolerates spaces after the quote).
                    while index < count, bytes[index] != separator, bytes[index] != 0x0A { index += 1 }
                } else {
                    let start = index
                    while index < count, bytes[index] != separator, bytes[index] != 0x0A { index += 1 }
                    var end = index
                    if end > start, bytes[end - 1] == 0x0D { end -= 1 }
                    record.fields.append(start..<end)
                    record.quoted.append(false)
                }
                if index < count, bytes[index] == separator { index += 1; continue }
                if index < count { index += 1; line += 1; lineStart = index }  // newline
                return record
            }
        }

        /// The text of a field, with doubled quotes undone in quoted fields and spaces trimmed.
        func text(_ range: Range<Int>, quoted: Bool) -> String {
            var start = range.lowerBound, end = range.upperBound
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            let raw = String(decoding: bytes[start..<end], as: UTF8.self)
            return quoted && bytes[start..<end].contains(0x22) ? raw.replacingOccurrences(of: "\"\"", with: "\"") : raw
        }
    }
}
