import Foundation
import PerimeterGeoJSON

/// Everything one benchmark run found: figures, agreement checks and scaling curves.
public struct Report: Sendable {
    /// One measured figure.
    public struct Figure: Sendable {
        /// The table it belongs to (one workload, one question).
        public var section: String
        /// Who was measured ("Perimeter engine, entry/exit", "refgrid (C)", "Shapely 2 STRtree bulk", …).
        public var subject: String
        /// The value.
        public var value: Double
        /// Its unit ("updates/s", "s", "MiB", …).
        public var unit: String
        /// Higher is better (throughput) or lower is better (time, memory).
        public var higherIsBetter: Bool
        /// Runs, sizes, caveats.
        public var note: String
        /// Whether this is the Perimeter figure that ratios in its section refer to.
        public var isReference: Bool
        /// Whether a ratio to the section's reference means something: `false` for a second yardstick
        /// (the same endpoint measured by another client), whose rows have ratios of their own.
        public var isComparedToReference = true
    }

    /// One agreement check.
    public struct Check: Sendable {
        /// What was compared.
        public var name: String
        /// Whether the answers agreed.
        public var passed: Bool
        /// Counts, or the first difference.
        public var detail: String
    }

    /// One scaling curve.
    public struct Curve: Sendable {
        /// Title.
        public var title: String
        /// X axis label.
        public var xLabel: String
        /// Column names after x.
        public var columns: [String]
        /// Rows: x, then one value per column.
        public var rows: [[Double]]
        /// Which column the chart draws.
        public var plotted: Int
    }

    /// Run-wide facts (machine, workload sizes, options).
    public var context: [(String, String)] = []
    /// Figures in the order measured.
    public var figures: [Figure] = []
    /// Agreement checks.
    public var checks: [Check] = []
    /// Scaling curves.
    public var curves: [Curve] = []
    /// Notes (skipped peers, TODOs).
    public var notes: [String] = []

    /// An empty report.
    public init() {}

    /// Whether every check passed.
    public var passed: Bool { checks.allSatisfy(\.passed) }

    /// Records a figure.
    public mutating func add(_ section: String, _ subject: String, _ value: Double, _ unit: String,
                             higherIsBetter: Bool = true, note: String = "", reference: Bool = false,
                             comparedToReference: Bool = true) {
        figures.append(Figure(section: section, subject: subject, value: value, unit: unit,
                              higherIsBetter: higherIsBetter, note: note, isReference: reference,
                              isComparedToReference: comparedToReference))
    }

    /// Records a check, printing it at once.
    public mutating func check(_ name: String, passed: Bool, _ detail: String) {
        checks.append(Check(name: name, passed: passed, detail: detail))
        log("\(passed ? "agree" : "DISAGREE"): \(name): \(detail)")
    }

    /// Records a note, printing it at once.
    public mutating func note(_ text: String) {
        notes.append(text)
        log("note: \(text)")
    }

    /// The reference figure of `section`, if any.
    func reference(of section: String, unit: String) -> Figure? {
        figures.first { $0.section == section && $0.isReference && $0.unit == unit }
    }

    /// Perimeter's advantage over `figure` (>1: Perimeter is better), if the section has a reference.
    public func ratio(of figure: Figure) -> Double? {
        guard figure.isComparedToReference, let r = reference(of: figure.section, unit: figure.unit), !figure.isReference,
              figure.value > 0, r.value > 0 else { return nil }
        return figure.higherIsBetter ? r.value / figure.value : figure.value / r.value
    }

    // MARK: - JSON

    /// The report as JSON.
    public func json() -> String {
        var root: [String: JSONValue] = [:]
        root["context"] = .object(Dictionary(context.map { ($0.0, JSONValue.string($0.1)) }, uniquingKeysWith: { $1 }))
        root["figures"] = .array(figures.map { f in
            var o: [String: JSONValue] = ["section": .string(f.section), "subject": .string(f.subject),
                                          "value": .double(f.value), "unit": .string(f.unit),
                                          "higherIsBetter": .bool(f.higherIsBetter), "note": .string(f.note),
                                          "reference": .bool(f.isReference)]
            if let r = ratio(of: f) { o["perimeterAdvantage"] = .double(r) }
            return .object(o)
        })
        root["checks"] = .array(checks.map { .object(["name": .string($0.name), "passed": .bool($0.passed), "detail": .string($0.detail)]) })
        root["curves"] = .array(curves.map { c in
            .object(["title": .string(c.title), "x": .string(c.xLabel), "columns": .array(c.columns.map { .string($0) }),
                     "rows": .array(c.rows.map { .array($0.map { .double($0) }) })])
        })
        root["notes"] = .array(notes.map { .string($0) })
        root["passed"] = .bool(passed)
        return JSONWriter().string(.object(root)) + "\n"
    }

    // MARK: - Markdown

    /// The report as Markdown tables.
    public func markdown() -> String {
        var md = "# Perimeter benchmark results\n\n"
        for (k, v) in context { md += "- **\(k)**: \(v)\n" }
        md += "\n"
        var sections: [String] = []
        for f in figures where !sections.contains(f.section) { sections.append(f.section) }
        for section in sections {
            md += "## \(section)\n\n| subject | value | Perimeter's advantage | note |\n|---|---:|---:|---|\n"
            for f in figures where f.section == section {
                let ratio = f.isReference ? "reference"
                    : !f.isComparedToReference ? "a reference of its own"
                    : ratio(of: f).map { Self.format($0) + "×" } ?? ""
                md += "| \(f.subject) | \(Self.format(f.value)) \(f.unit) | \(ratio) | \(f.note) |\n"
            }
            md += "\n"
        }
        for c in curves {
            md += "## \(c.title)\n\n| \(c.xLabel) | " + c.columns.joined(separator: " | ") + " |\n"
            md += "|" + String(repeating: "---:|", count: c.columns.count + 1) + "\n"
            for row in c.rows { md += "| " + row.map(Self.format).joined(separator: " | ") + " |\n" }
            md += "\n"
        }
        md += "## Agreement checks\n\n| check | result | detail |\n|---|---|---|\n"
        for c in checks { md += "| \(c.name) | \(c.passed ? "agree" : "**DISAGREE**") | \(c.detail) |\n" }
        if !notes.isEmpty {
            md += "\n## Notes\n\n"
            for n in notes { md += "- \(n)\n" }
        }
        return md
    }

    /// A compact human form: 3 significant digits, thousands separated.
    public static func format(_ v: Double) -> String {
        guard v.isFinite else { return "n/a" }
        let a = abs(v)
        if a >= 1000 {
            let digits = String(Int(v.rounded()))
            var out = ""
            for (i, ch) in digits.reversed().enumerated() {
                if i > 0 && i % 3 == 0 && ch != "-" { out.append(",") }
                out.append(ch)
            }
            return String(out.reversed())
        }
        if a >= 100 { return String(format: "%.0f", v) }
        if a >= 10 { return String(format: "%.1f", v) }
        if a >= 1 { return String(format: "%.2f", v) }
        if a == 0 { return "0" }
        return String(format: "%.3g", v)
    }
}

/// Progress and findings go to stderr, so stdout stays clean.
func log(_ text: String) {
    FileHandle.standardError.write(Data("[bench] \(text)\n".utf8))
}
