import Foundation

/// Draws a report as one SVG: throughput of the engine and its peers (log scale) and the scaling curves.
public enum ReportChart {
    /// The SVG text.
    public static func svg(_ report: Report) -> String {
        let panelW = 460.0, panelH = 300.0
        let panels = 1 + report.curves.count
        let cols = 2, rows = (panels + 1) / 2
        let width = Double(cols) * panelW, height = Double(rows) * panelH + 30
        var s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height))\" font-family=\"sans-serif\" font-size=\"11\">\n"
        s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        s += "<text x=\"10\" y=\"20\" font-size=\"15\" font-weight=\"bold\">Perimeter benchmarks\(report.passed ? "" : " — DISAGREEMENT")</text>\n"
        s += bars(report, x: 0, y: 30, w: panelW, h: panelH)
        for (i, curve) in report.curves.enumerated() {
            let k = i + 1
            s += line(curve, x: Double(k % cols) * panelW, y: 30 + Double(k / cols) * panelH, w: panelW, h: panelH)
        }
        return s + "</svg>\n"
    }

    private static func escape(_ t: String) -> String {
        t.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }

    /// Horizontal log-scale bars of the engine section.
    private static func bars(_ report: Report, x: Double, y: Double, w: Double, h: Double) -> String {
        let figures = report.figures.filter { $0.section == EngineBench.Section.engine && $0.value > 0 }
        var s = "<g transform=\"translate(\(x),\(y))\">\n<text x=\"10\" y=\"16\" font-weight=\"bold\">\(escape(EngineBench.Section.engine)) (updates/s, log scale)</text>\n"
        guard let maxV = figures.map(\.value).max(), let minV = figures.map(\.value).min() else { return s + "</g>\n" }
        let lo = floor(log10(minV)) , hi = ceil(log10(maxV))
        let left = 10.0, right = w - 20, top = 30.0
        let barH = min(36, (h - 60) / Double(max(1, figures.count)))
        func px(_ v: Double) -> Double { left + (log10(v) - lo) / max(1, hi - lo) * (right - left) }
        var e = lo
        while e <= hi {
            let gx = px(pow(10, e))
            s += "<line x1=\"\(gx)\" y1=\"\(top)\" x2=\"\(gx)\" y2=\"\(h - 25)\" stroke=\"#ddd\"/><text x=\"\(gx)\" y=\"\(h - 12)\" text-anchor=\"middle\">1e\(Int(e))</text>\n"
            e += 1
        }
        for (i, f) in figures.enumerated() {
            let by = top + Double(i) * barH
            let colour = f.isReference ? "rgb(7,144,30)" : "rgb(119,119,119)"
            s += "<rect x=\"\(left)\" y=\"\(by + 2)\" width=\"\(max(1, px(f.value) - left))\" height=\"\(barH - 14)\" fill=\"\(colour)\"/>\n"
            s += "<text x=\"\(left + 3)\" y=\"\(by + barH - 2)\">\(escape(f.subject)): \(Report.format(f.value))</text>\n"
        }
        return s + "</g>\n"
    }

    /// A log-log line chart of one curve's plotted column.
    private static func line(_ c: Report.Curve, x: Double, y: Double, w: Double, h: Double) -> String {
        var s = "<g transform=\"translate(\(x),\(y))\">\n<text x=\"10\" y=\"16\" font-weight=\"bold\">\(escape(c.title))</text>\n"
        let pts = c.rows.compactMap { r -> (Double, Double)? in
            r.count > c.plotted + 1 && r[0] > 0 && r[c.plotted + 1] > 0 ? (r[0], r[c.plotted + 1]) : nil
        }
        guard pts.count >= 1 else { return s + "</g>\n" }
        let xlo = floor(log10(pts.map(\.0).min()!)), xhi = max(xlo + 1, ceil(log10(pts.map(\.0).max()!)))
        let ylo = floor(log10(pts.map(\.1).min()!)), yhi = max(ylo + 1, ceil(log10(pts.map(\.1).max()!)))
        let left = 55.0, right = w - 20, top = 30.0, bottom = h - 35
        func px(_ v: Double) -> Double { left + (log10(v) - xlo) / (xhi - xlo) * (right - left) }
        func py(_ v: Double) -> Double { bottom - (log10(v) - ylo) / (yhi - ylo) * (bottom - top) }
        s += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(right - left)\" height=\"\(bottom - top)\" fill=\"none\" stroke=\"#999\"/>\n"
        var e = xlo
        while e <= xhi { s += "<text x=\"\(px(pow(10, e)))\" y=\"\(bottom + 14)\" text-anchor=\"middle\">1e\(Int(e))</text>\n"; e += 1 }
        e = ylo
        while e <= yhi { s += "<text x=\"\(left - 4)\" y=\"\(py(pow(10, e)) + 4)\" text-anchor=\"end\">1e\(Int(e))</text>\n"; e += 1 }
        s += "<text x=\"\((left + right) / 2)\" y=\"\(h - 6)\" text-anchor=\"middle\">\(escape(c.xLabel))</text>\n"
        s += "<text x=\"\(left + 6)\" y=\"\(top + 14)\">\(escape(c.columns[c.plotted]))</text>\n"
        let path = pts.map { "\(px($0.0)),\(py($0.1))" }.joined(separator: " ")
        s += "<polyline points=\"\(path)\" fill=\"none\" stroke=\"rgb(17,97,195)\" stroke-width=\"2\"/>\n"
        for p in pts { s += "<circle cx=\"\(px(p.0))\" cy=\"\(py(p.1))\" r=\"3\" fill=\"rgb(17,97,195)\"/>\n" }
        return s + "</g>\n"
    }
}
