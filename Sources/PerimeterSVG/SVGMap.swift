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
        case .cross: "rgb(214,120,0)"
        case .inside: "rgb(7,144,30)"
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
        var bounds = Bounds()
        for fence in fences {
            for box in fence.region.boundingBoxes {
                bounds.add(Self.project(Coordinate(latitude: box.minLatitude, longitude: box.minLongitude)))
                bounds.add(Self.project(Coordinate(latitude: box.maxLatitude, longitude: box.maxLongitude)))
            }
        }
        for track in tracks { for c in track.path { bounds.add(Self.project(c)) } }
        if bounds.isEmpty { bounds.add((0, 0)) }
        let spanX = max(bounds.maxX - bounds.minX, 1e-9), spanY = max(bounds.maxY - bounds.minY, 1e-9)
        let scale = (width - 2 * margin) / spanX
        let height = (spanY * scale + 2 * margin).rounded(.up)
        let canvas = Canvas(minX: bounds.minX, maxY: bounds.maxY, scale: scale, margin: margin)

        var lastEvent: [FenceID: GeofenceEventKind] = [:]
        for event in events { lastEvent[event.fence] = event.kind }

        var svg = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Self.number(width))" height="\(Self.number(height))" \
        viewBox="0 0 \(Self.number(width)) \(Self.number(height))" font-family="Helvetica, Arial, sans-serif">
        <rect width="100%" height="100%" fill="rgb(246,244,240)"/>

        """
        svg += "<g id=\"fences\">\n"
        for fence in fences {
            svg += fenceElement(fence, colour: Self.colour(for: lastEvent[fence.id]), canvas: canvas)
        }
        svg += "</g>\n<g id=\"tracks\" fill=\"none\" stroke=\"rgb(40,40,40)\" stroke-width=\"1.5\" stroke-linejoin=\"round\">\n"
        for track in tracks where track.path.count > 1 {
            svg += "<polyline data-device=\"\(Self.escape(track.device.rawValue))\" points=\"\(track.path.map(canvas.point).joined(separator: " "))\"/>\n"
        }
        svg += "</g>\n<g id=\"events\" stroke=\"white\" stroke-width=\"1\">\n"
        for event in events {
            let (x, y) = canvas.pixel(event.coordinate)
            svg += "<circle cx=\"\(Self.number(x))\" cy=\"\(Self.number(y))\" r=\"4\" fill=\"\(Self.colour(for: event.kind))\"><title>\(event.kind.rawValue) \(Self.escape(event.fence.rawValue)) \(Self.escape(event.device.rawValue))</title></circle>\n"
        }
        svg += "</g>\n<g id=\"labels\" font-size=\"12\" text-anchor=\"middle\" fill=\"rgb(20,20,20)\" stroke=\"white\" stroke-width=\"3\" stroke-opacity=\"0.8\" paint-order=\"stroke\">\n"
        for fence in fences {
            guard let anchor = Self.labelAnchor(of: fence.region) else { continue }
            let (x, y) = canvas.pixel(anchor)
            svg += "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y + 4))\">\(Self.escape(fence.displayName))</text>\n"
        }
        svg += "</g>\n"
        if let title {
            svg += "<text x=\"\(Self.number(margin))\" y=\"\(Self.number(margin))\" font-size=\"16\" font-weight=\"bold\">\(Self.escape(title))</text>\n"
        }
        svg += legend(y: height - margin / 2)
        svg += "</svg>\n"
        return svg
    }

    /// One `<g data-fence=…>` drawing a fence: polygons filled (even-odd, so holes show) with their buffer
    /// as a translucent rim, circles as geodesic outlines, corridors as lines as wide as the corridor.
    private func fenceElement(_ fence: Fence, colour: String, canvas: Canvas) -> String {
        let region = fence.region
        var body = ""
        switch region.shape {
        case .polygons(let polygons):
            let d = polygons.flatMap(\.rings).map { ring in "M" + ring.map(canvas.point).joined(separator: "L") + "Z" }.joined()
            if region.buffer > 0, let c = polygons.first?.rings.first?.first {
                body += "<path d=\"\(d)\" fill=\"none\" stroke=\"\(colour)\" stroke-opacity=\"0.35\" stroke-linejoin=\"round\" stroke-width=\"\(Self.number(2 * canvas.pixels(metres: region.buffer, at: c)))\"/>"
            }
            body += "<path d=\"\(d)\" fill=\"\(colour)\" fill-opacity=\"0.7\" fill-rule=\"evenodd\" stroke=\"\(colour)\" stroke-width=\"1.5\"/>"
        case .circle(let center, let radius):
            let ring = (0...72).map { Geodesic.wgs84.destination(from: center, azimuth: Double($0 % 72) * 5, distance: radius + region.buffer) }
            body += "<path d=\"M\(ring.map(canvas.point).joined(separator: "L"))Z\" fill=\"\(colour)\" fill-opacity=\"0.7\" stroke=\"\(colour)\" stroke-width=\"1.5\"/>"
        case .corridor(let lines, let radius):
            for line in lines {
                guard let first = line.first else { continue }
                let width = 2 * canvas.pixels(metres: radius + region.buffer, at: first)
                let points = line.count == 1 ? [canvas.point(first), canvas.point(first)] : line.map(canvas.point)
                body += "<path d=\"M\(points.joined(separator: "L"))\" fill=\"none\" stroke=\"\(colour)\" stroke-opacity=\"0.7\" stroke-linecap=\"round\" stroke-linejoin=\"round\" stroke-width=\"\(Self.number(width))\"/>"
            }
        }
        return "<g data-fence=\"\(Self.escape(fence.id.rawValue))\" data-colour=\"\(colour)\"><title>\(Self.escape(fence.displayName))</title>\(body)</g>\n"
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

    /// Web Mercator (unit sphere, y up).
    static func project(_ c: Coordinate) -> (Double, Double) {
        let lat = max(-85.05112878, min(85.05112878, c.latitude)) * .pi / 180
        return (c.longitude * .pi / 180, log(tan(.pi / 4 + lat / 2)))
    }

    /// Where a fence's name goes: inside the area. For polygons, the middle of the widest inside stretch of
    /// the horizontal line through the largest polygon's centre, so a name never sits in a hole.
    static func labelAnchor(of region: Region) -> Coordinate? {
        switch region.shape {
        case .circle(let center, _):
            return center
        case .corridor(let lines, _):
            guard let line = lines.first, !line.isEmpty else { return nil }
            return line[line.count / 2]
        case .polygons(let polygons):
            guard let polygon = polygons.max(by: { $0.boundingBox.width * $0.boundingBox.height < $1.boundingBox.width * $1.boundingBox.height }),
                  let exterior = polygon.rings.first, !exterior.isEmpty else { return nil }
            let box = polygon.boundingBox
            let y = (box.minLatitude + box.maxLatitude) / 2
            var crossings: [Double] = []
            for ring in polygon.rings {
                for (a, b) in zip(ring, ring.dropFirst()) where (a.latitude > y) != (b.latitude > y) {
                    crossings.append(a.longitude + (y - a.latitude) / (b.latitude - a.latitude) * (b.longitude - a.longitude))
                }
            }
            crossings.sort()
            var best: (Double, Double)?
            for i in stride(from: 0, to: crossings.count - 1, by: 2) {
                let span = (crossings[i], crossings[i + 1])
                if best.map({ span.1 - span.0 > $0.1 - $0.0 }) ?? true { best = span }
            }
            guard let (west, east) = best else { return exterior[0] }
            return Coordinate(latitude: y, longitude: (west + east) / 2)
        }
    }

    /// Maps projected coordinates to pixels.
    private struct Canvas {
        let minX: Double, maxY: Double, scale: Double, margin: Double

        func pixel(_ c: Coordinate) -> (Double, Double) {
            let (x, y) = SVGMap.project(c)
            return ((x - minX) * scale + margin, (maxY - y) * scale + margin)
        }

        func point(_ c: Coordinate) -> String {
            let (x, y) = pixel(c)
            return SVGMap.number(x) + "," + SVGMap.number(y)
        }

        /// Pixels covered by `metres` on the ground near `c` (Web Mercator's scale grows with latitude).
        func pixels(metres: Double, at c: Coordinate) -> Double {
            metres / (6_378_137 * max(cos(c.latitude * .pi / 180), 1e-6)) * scale
        }
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
