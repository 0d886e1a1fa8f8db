import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry

/// Draws fences, device tracks and events as a standalone SVG document in Web Mercator.
///
/// Each fence is filled with the colour of its last event — entry green `rgb(7,144,30)`, exit red
/// `rgb(173,17,5)`, dwell blue `rgb(17,97,195)`, none grey `rgb(119,119,119)` — the colours of the Mapbox
/// geofencing tutorial. Tracks are drawn as lines, events as dots in their kind's colour, fences labelled
/// with their names. The view is fitted to everything drawn.
public struct SVGMap: Sendable {
    /// Width of the drawing in pixels (the height follows from the data's aspect ratio).
    public var width: Double
    /// Margin around the data in pixels.
    public var margin: Double
    /// A title drawn in the top-left corner, if any.
    public var title: String?

    /// Creates a renderer.
    public init(width: Double = 1000, margin: Double = 24, title: String? = nil) {
        self.width = width
        self.margin = margin
        self.title = title
    }

    /// The fill colour for a fence whose last event was `kind` (`nil`: no event).
    public static func colour(for kind: GeofenceEventKind?) -> String {
        switch kind {
        case .entry: "rgb(7,144,30)"
        case .exit: "rgb(173,17,5)"
        case .dwell: "rgb(17,97,195)"
        case nil: "rgb(119,119,119)"
        }
    }

    /// Renders the SVG document.
    ///
    /// - Parameters:
    ///   - fences: the fences to draw.
    ///   - tracks: each device's path, in time order.
    ///   - events: the events to mark; a fence's fill is the colour of its last event in this list.
    public func render(fences: [Fence], tracks: [(device: DeviceID, path: [Coordinate])], events: [GeofenceEvent]) -> String {
        let outlines = fences.map { (fence: $0, rings: Self.outline(of: $0.region)) }
        var bounds = Bounds()
        for (_, rings) in outlines { for ring in rings { for c in ring { bounds.add(Self.project(c)) } } }
        for track in tracks { for c in track.path { bounds.add(Self.project(c)) } }
        if bounds.isEmpty { bounds.add((0, 0)) }
        let spanX = max(bounds.maxX - bounds.minX, 1e-9), spanY = max(bounds.maxY - bounds.minY, 1e-9)
        let scale = (width - 2 * margin) / spanX
        let height = (spanY * scale + 2 * margin).rounded(.up)
        func pixel(_ c: Coordinate) -> (x: String, y: String) {
            let (x, y) = Self.project(c)
            return (Self.number((x - bounds.minX) * scale + margin), Self.number((bounds.maxY - y) * scale + margin))
        }
        func point(_ c: Coordinate) -> String {
            let p = pixel(c)
            return p.x + "," + p.y
        }

        var lastEvent: [FenceID: GeofenceEventKind] = [:]
        for event in events { lastEvent[event.fence] = event.kind }

        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.number(width))" height="\(Self.number(height))" \
        viewBox="0 0 \(Self.number(width)) \(Self.number(height))" font-family="Helvetica, Arial, sans-serif">
        <rect width="100%" height="100%" fill="rgb(246,244,240)"/>

        """
        svg += "<g id=\"fences\">\n"
        for (fence, rings) in outlines {
            let colour = Self.colour(for: lastEvent[fence.id])
            let d = rings.map { ring in "M" + ring.map(point).joined(separator: "L") + "Z" }.joined()
            svg += "<path data-fence=\"\(Self.escape(fence.id.rawValue))\" d=\"\(d)\" fill=\"\(colour)\" fill-opacity=\"0.7\" fill-rule=\"evenodd\" stroke=\"\(colour)\" stroke-width=\"1.5\"><title>\(Self.escape(fence.displayName))</title></path>\n"
        }
        svg += "</g>\n<g id=\"tracks\" fill=\"none\" stroke=\"rgb(40,40,40)\" stroke-width=\"1.5\" stroke-linejoin=\"round\">\n"
        for track in tracks where track.path.count > 1 {
            svg += "<polyline data-device=\"\(Self.escape(track.device.rawValue))\" points=\"\(track.path.map(point).joined(separator: " "))\"/>\n"
        }
        svg += "</g>\n<g id=\"events\" stroke=\"white\" stroke-width=\"1\">\n"
        for event in events {
            let p = pixel(event.coordinate)
            svg += "<circle cx=\"\(p.x)\" cy=\"\(p.y)\" r=\"4\" fill=\"\(Self.colour(for: event.kind))\"><title>\(event.kind.rawValue) \(Self.escape(event.fence.rawValue)) \(Self.escape(event.device.rawValue))</title></circle>\n"
        }
        svg += "</g>\n<g id=\"labels\" font-size=\"12\" text-anchor=\"middle\" fill=\"rgb(20,20,20)\">\n"
        for (fence, rings) in outlines {
            guard let ring = rings.first, !ring.isEmpty else { continue }
            let (x, y) = Self.labelPoint(ring.map(Self.project))
            svg += "<text x=\"\(Self.number((x - bounds.minX) * scale + margin))\" y=\"\(Self.number((bounds.maxY - y) * scale + margin))\">\(Self.escape(fence.displayName))</text>\n"
        }
        svg += "</g>\n"
        if let title {
            svg += "<text x=\"\(Self.number(margin))\" y=\"\(Self.number(margin))\" font-size=\"16\" font-weight=\"bold\">\(Self.escape(title))</text>\n"
        }
        svg += legend(y: height - margin / 2)
        svg += "</svg>\n"
        return svg
    }

    private func legend(y: Double) -> String {
        var x = margin
        var text = "<g id=\"legend\" font-size=\"11\">\n"
        for (label, kind) in [("entry", GeofenceEventKind.entry), ("dwell", .dwell), ("exit", .exit)] as [(String, GeofenceEventKind?)] + [("no event", nil)] {
            text += "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y - 9))\" width=\"10\" height=\"10\" fill=\"\(Self.colour(for: kind))\"/>"
            text += "<text x=\"\(Self.number(x + 14))\" y=\"\(Self.number(y))\">\(label)</text>\n"
            x += 80
        }
        return text + "</g>\n"
    }

    // MARK: - Geometry helpers

    /// Rings (lon/lat) that outline a region: polygon rings as they are, circles and corridors approximated.
    static func outline(of region: Region) -> [[Coordinate]] {
        switch region.shape {
        case .polygons(let polygons):
            return polygons.flatMap(\.rings)
        case .circle(let center, let radius):
            return [circle(center, radius + region.buffer)]
        case .corridor(let lines, let radius):
            // Each vertex's disc and each segment's band: a readable outline, not an exact buffer.
            var rings: [[Coordinate]] = []
            let r = radius + region.buffer
            for line in lines {
                for c in line { rings.append(circle(c, r)) }
                for (a, b) in zip(line, line.dropFirst()) {
                    let azimuth = bearing(a, b)
                    let left = azimuth - 90, right = azimuth + 90
                    let g = Geodesic.wgs84
                    rings.append([
                        g.destination(from: a, azimuth: left, distance: r), g.destination(from: b, azimuth: left, distance: r),
                        g.destination(from: b, azimuth: right, distance: r), g.destination(from: a, azimuth: right, distance: r),
                        g.destination(from: a, azimuth: left, distance: r),
                    ])
                }
            }
            return rings
        }
    }

    private static func circle(_ center: Coordinate, _ radius: Double) -> [Coordinate] {
        (0...48).map { Geodesic.wgs84.destination(from: center, azimuth: Double($0 % 48) * 7.5, distance: radius) }
    }

    private static func bearing(_ a: Coordinate, _ b: Coordinate) -> Double {
        let k = cos(a.latitude * .pi / 180)
        return atan2((b.longitude - a.longitude) * k, b.latitude - a.latitude) * 180 / .pi
    }

    /// Web Mercator (unit sphere, y up).
    static func project(_ c: Coordinate) -> (Double, Double) {
        let lat = max(-85.05112878, min(85.05112878, c.latitude)) * .pi / 180
        return (c.longitude * .pi / 180, log(tan(.pi / 4 + lat / 2)))
    }

    /// The centroid of a projected ring (area-weighted), or its first point for degenerate rings.
    private static func labelPoint(_ ring: [(Double, Double)]) -> (Double, Double) {
        var area = 0.0, cx = 0.0, cy = 0.0
        for (p, q) in zip(ring, ring.dropFirst()) {
            let cross = p.0 * q.1 - q.0 * p.1
            area += cross
            cx += (p.0 + q.0) * cross
            cy += (p.1 + q.1) * cross
        }
        guard abs(area) > 1e-18 else { return ring[0] }
        return (cx / (3 * area), cy / (3 * area))
    }

    private struct Bounds {
        var minX = Double.infinity, minY = Double.infinity, maxX = -Double.infinity, maxY = -Double.infinity
        var isEmpty: Bool { minX > maxX }
        mutating func add(_ p: (Double, Double)) {
            guard p.0.isFinite, p.1.isFinite else { return }
            minX = min(minX, p.0); maxX = max(maxX, p.0); minY = min(minY, p.1); maxY = max(maxY, p.1)
        }
    }

    static func number(_ value: Double) -> String {
        String(format: "%.1f", value)
    }

    /// Escapes text for XML content and attribute values.
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.count)
        for character in text {
            switch character {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            default: result.append(character)
            }
        }
        return result
    }
}
