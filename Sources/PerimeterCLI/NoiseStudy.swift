import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry
import PerimeterTracks

/// The noise study: a fence boundary drawn through the middle of a cloud of fixes, and how many
/// transitions each option lets through (docs/studies.md).
enum NoiseStudy {
    /// One configuration's outcome on one data set.
    struct Row: Sendable {
        var option: String
        /// Entries plus exits.
        var transitions: Int
        /// Every event (entries, exits, dwells none) per hour of data.
        var eventsPerHour: Double
    }

    /// One data set's outcome.
    struct Dataset: Sendable {
        var name: String
        var fixes: Int
        var hours: Double
        /// Largest distance of a fix from the cloud's centroid, metres.
        var jitterRadius: Double
        /// 95th percentile of those distances, metres.
        var jitter95: Double
        /// Median reported accuracy, metres (`nil` when the file has none).
        var medianAccuracy: Double?
        /// Where the fence boundary runs.
        var boundary: String
        var rows: [Row]
    }

    /// Runs the study on the two logs below `fixtures`.
    static func run(fixtures: String) throws -> [Dataset] {
        let jitter = try read(fixtures + "/tracks/gpx/devices/stationary_jitter.gpx", device: "jitter")
        let google = try read(fixtures + "/tracks/csv/google_trajectory.csv", device: "google")
        return [study(jitter, name: "stationary_jitter.gpx"), study(google, name: "google_trajectory.csv")]
    }

    static func read(_ path: String, device: DeviceID) throws -> [LocationUpdate] {
        let (updates, _) = try InputFiles.tracks([path], reader: TrackReader(device: device))
        // The CSV lists fixes newest first: put them in time order (stable for equal times).
        return updates.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
    }

    static func study(_ updates: [LocationUpdate], name: String) -> Dataset {
        let n = Double(updates.count)
        let centre = Coordinate(latitude: updates.map(\.coordinate.latitude).reduce(0, +) / n,
                                longitude: updates.map(\.coordinate.longitude).reduce(0, +) / n)
        let distances = updates.map { Geodesic.wgs84.distance(from: centre, to: $0.coordinate) }.sorted()
        let radius = distances.last ?? 0
        let p95 = distances.isEmpty ? 0 : distances[min(distances.count - 1, Int(0.95 * Double(distances.count)))]
        let accuracies = updates.compactMap(\.horizontalAccuracy).sorted()
        let medianAccuracy = accuracies.isEmpty ? nil : accuracies[accuracies.count / 2]
        let hours = max(1e-9, (updates.last?.time.timeIntervalSince(updates[0].time) ?? 0) / 3600)

        // The boundary runs along the cloud's long axis through the median of the other coordinate,
        // so it halves the cloud; the fence is the 5.5 km square on one side of it.
        let metresPerDegreeLongitude = 111_320 * cos(centre.latitude * .pi / 180)
        let spreadLatitude = spread(updates.map { $0.coordinate.latitude * 111_132 })
        let spreadLongitude = spread(updates.map { $0.coordinate.longitude * metresPerDegreeLongitude })
        let alongParallel = spreadLongitude >= spreadLatitude
        let split = median(updates.map { alongParallel ? $0.coordinate.latitude : $0.coordinate.longitude })
        let corners: [(Double, Double)] = alongParallel
            ? [(split - 0.05, centre.longitude - 0.05), (split - 0.05, centre.longitude + 0.05), (split, centre.longitude + 0.05),
               (split, centre.longitude - 0.05), (split - 0.05, centre.longitude - 0.05)]
            : [(centre.latitude - 0.05, split - 0.05), (centre.latitude - 0.05, split), (centre.latitude + 0.05, split),
               (centre.latitude + 0.05, split - 0.05), (centre.latitude - 0.05, split - 0.05)]
        let ring = corners.map { Coordinate(latitude: $0.0, longitude: $0.1) }
        let fence = Fence(id: "half", region: Region(.polygons([Polygon(rings: [ring])])))
        let boundary = alongParallel ? "the parallel through the median latitude" : "the meridian through the median longitude"

        var runs: [(String, DetectionOptions, [LocationUpdate])] = [("raw (no option)", DetectionOptions(), updates)]
        if let medianAccuracy {
            runs.append(("conservative (reported accuracy)", .init(accuracy: .conservative), updates))
            runs.append((String(format: "hysteresis %.0f m (median accuracy)", medianAccuracy), .init(hysteresis: medianAccuracy), updates))
            runs.append((String(format: "max-accuracy %.0f m", medianAccuracy), .init(maximumAccuracy: medianAccuracy), updates))
        } else {
            let assumed = updates.map { u -> LocationUpdate in
                var copy = u
                copy.horizontalAccuracy = radius
                return copy
            }
            runs.append((String(format: "conservative (accuracy := %.0f m, none in file)", radius), .init(accuracy: .conservative), assumed))
            runs.append((String(format: "hysteresis %.0f m (jitter radius)", radius), .init(hysteresis: radius), updates))
            runs.append(("hysteresis 5 m", .init(hysteresis: 5), updates))
        }
        runs.append(("entry/exit delay 60 s", .init(entryDelay: 60, exitDelay: 60), updates))
        runs.append(("entry/exit delay 300 s", .init(entryDelay: 300, exitDelay: 300), updates))

        let rows = runs.map { label, options, input -> Row in
            var engine = DetectionEngine(fences: [fence], configuration: .init(options: options))
            var events = engine.replay(input).events
            if let last = input.last { engine.advance(to: last.time, into: &events) }
            let transitions = events.filter { $0.kind == .entry || $0.kind == .exit }.count
            return Row(option: label, transitions: transitions, eventsPerHour: Double(events.count) / hours)
        }
        return Dataset(name: name, fixes: updates.count, hours: hours, jitterRadius: radius, jitter95: p95,
                       medianAccuracy: medianAccuracy, boundary: boundary, rows: rows)
    }

    private static func spread(_ values: [Double]) -> Double {
        let mean = values.reduce(0, +) / Double(max(1, values.count))
        return (values.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(max(1, values.count))).squareRoot()
    }

    private static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// The results as Markdown.
    static func markdown(_ datasets: [Dataset]) -> String {
        var text = "# Noise study\n\nA fence boundary along the long axis of each cloud of fixes halves it.\n"
        for d in datasets {
            text += "\n## \(d.name)\n\nBoundary: \(d.boundary). "
            text += String(format: "%d fixes over %.2f h; cloud radius %.1f m (95th percentile %.1f m)", d.fixes, d.hours,
                           d.jitterRadius, d.jitter95)
            text += d.medianAccuracy.map { String(format: "; median reported accuracy %.0f m.\n\n", $0) } ?? "; no accuracy in the file.\n\n"
            text += "| option | transitions | events per hour |\n|---|---:|---:|\n"
            for row in d.rows { text += "| \(row.option) | \(row.transitions) | " + String(format: "%.1f", row.eventsPerHour) + " |\n" }
        }
        return text
    }
}
