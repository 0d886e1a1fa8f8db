import Foundation
import PerimeterGeoJSON

/// Bulk GeoJSON loading: ``GeoJSONReader`` against `JSONDecoder` (the Codable model) on one large
/// FeatureCollection. Each measurement is a child process of perimeter-bench (`--child MODE FILE`),
/// pinned to one core, reporting its own peak RSS (VmHWM).
public enum LoadBench {
    /// Child modes.
    public enum Mode: String, CaseIterable, Sendable {
        /// Read the file only (the baseline both parsers share).
        case baseline
        /// Parse with the fast reader.
        case reader
        /// Decode with `JSONDecoder`.
        case decoder
    }

    /// The body of a child process: loads `file` in `mode`, prints one JSON line; returns the exit status.
    public static func child(mode: Mode, file: String) -> Int32 {
        guard let data = FileManager.default.contents(atPath: file) else {
            log("cannot read \(file)"); return 2
        }
        let t0 = Measure.cpuSeconds()
        var features = 0
        switch mode {
        case .baseline:
            features = data.reduce(0) { $0 &+ Int($1 == UInt8(ascii: "\n") ? 1 : 0) }
        case .reader:
            let result = data.withUnsafeBytes { GeoJSONReader().read($0) }
            guard let object = result.object else { log("reader failed: \(result.problems.first.map { "\($0)" } ?? "")"); return 3 }
            features = object.features.count
        case .decoder:
            do { features = try JSONDecoder().decode(GeoJSON.Object.self, from: data).features.count }
            catch { log("JSONDecoder failed: \(error)"); return 3 }
        }
        let seconds = Measure.cpuSeconds() - t0
        print("{\"mode\":\"\(mode.rawValue)\",\"seconds\":\(seconds),\"features\":\(features),\"vmhwm\":\(Measure.peakResidentBytes())}")
        return 0
    }

    /// Writes the load file (the workload's fences repeated up to about `targetBytes`), runs each mode
    /// `runs` times in a pinned child, and adds figures and checks.
    public static func run(workload: Workload, targetBytes: Int, runs: Int, core: Int, workDirectory: URL,
                           executable: String, into report: inout Report) {
        let once = WorkloadFiles.geoJSON(workload.fences).count
        let times = max(1, Int((Double(targetBytes) / Double(max(1, once))).rounded(.up)))
        let bytes = WorkloadFiles.geoJSON(workload.fences, repeat: times)
        let file = workDirectory.appendingPathComponent("load.geojson")
        do { try Data(bytes).write(to: file) } catch {
            report.check("GeoJSON load: write \(file.path)", passed: false, "\(error)"); return
        }
        let expected = workload.fences.count * times
        let section = "Bulk GeoJSON load (\(Report.format(Double(bytes.count) / 1_048_576)) MiB FeatureCollection, \(expected) features)"
        var results: [Mode: (seconds: Double, peak: Double)] = [:]
        for mode in Mode.allCases {
            var seconds: [Double] = [], peaks: [Double] = []
            for _ in 0..<max(1, runs) {
                let out = ChildProcess.run([executable, "--child", mode.rawValue, file.path], core: core)
                guard out.status == 0, let r = ChildProcess.lastJSONObject(out.output) else {
                    report.check("GeoJSON load: \(mode.rawValue) child", passed: false, "exit status \(out.status)"); return
                }
                if mode != .baseline {
                    let n = Int(r.number("features") ?? -1)
                    if n != expected {
                        report.check("GeoJSON load: \(mode.rawValue) feature count", passed: false, "\(n) features, expected \(expected)")
                        return
                    }
                }
                seconds.append(r.number("seconds") ?? 0)
                // The child's own high-water mark (VmHWM, read after exec). wait4's ru_maxrss is kept as a
                // fallback only: for a posix_spawn'ed child it also counts the parent's pages before exec.
                peaks.append(r.number("vmhwm").map { $0 > 0 ? $0 : Double(out.peakResidentBytes) } ?? Double(out.peakResidentBytes))
            }
            results[mode] = (Measure.median(seconds), Measure.median(peaks))
        }
        report.check("GeoJSON load: reader and JSONDecoder read every feature", passed: true, "\(expected) features each")
        let base = results[.baseline]!, reader = results[.reader]!, decoder = results[.decoder]!  // every mode ran
        let mib = 1_048_576.0
        report.add(section, "GeoJSONReader: time", reader.seconds, "s", higherIsBetter: false,
                   note: "median of \(runs) child processes", reference: true)
        report.add(section, "JSONDecoder (Codable model): time", decoder.seconds, "s", higherIsBetter: false,
                   note: "goal: reader ≥ 5× faster")
        report.add(section, "GeoJSONReader: peak RSS", reader.peak / mib, "MiB", higherIsBetter: false,
                   note: "child VmHWM; reading the file alone peaks at \(Report.format(base.peak / mib)) MiB",
                   reference: true)
        report.add(section, "JSONDecoder: peak RSS", decoder.peak / mib, "MiB", higherIsBetter: false,
                   note: "goal: reader ≤ ½ of this")
        report.context.append(("GeoJSON load", String(format: "reader %.2fx faster than JSONDecoder, %.2fx of its peak RSS",
                                                       decoder.seconds / max(1e-9, reader.seconds), reader.peak / max(1, decoder.peak))))
    }
}
