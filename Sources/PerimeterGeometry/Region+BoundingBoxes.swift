import Foundation

extension Region {
    /// Boxes (never crossing the antimeridian) that together hold every point of the region.
    ///
    /// Conservative: radius and buffer are converted to degrees with lower bounds on the metres
    /// per degree (so boxes grow toward the poles); latitudes are clamped to ±90; a box whose
    /// reach includes a pole, or would span 180° of longitude or more, covers all longitudes. A
    /// box reaching past ±180 is split in two. A box touching ±180 also gets a zero-width box at
    /// the opposite meridian, since −180 and 180 are the same place.
    /// - Complexity: O(n) in the number of vertices; allocates the returned array.
    public var boundingBoxes: [BoundingBox] {
        var result: [BoundingBox] = []
        switch shape {
        case .polygons(let polygons):
            let r = Swift.max(0, buffer)
            for polygon in polygons where polygon.boundingBox.minLatitude <= polygon.boundingBox.maxLatitude {
                Region.appendExpanded(polygon.boundingBox, metres: r, to: &result)
            }
        case .circle(let center, let radius):
            let r = radius + buffer
            guard r >= 0 else { return [] }
            Region.appendExpanded(BoundingBox(minLongitude: center.longitude, minLatitude: center.latitude,
                                              maxLongitude: center.longitude, maxLatitude: center.latitude),
                                  metres: r, to: &result)
        case .corridor(let lines, let radius):
            let r = radius + buffer
            guard r >= 0 else { return [] }
            for line in lines {
                guard var previous = line.first else { continue }
                var box = BoundingBox(minLongitude: previous.longitude, minLatitude: previous.latitude,
                                      maxLongitude: previous.longitude, maxLatitude: previous.latitude)
                for c in line.dropFirst() {
                    // Follow the line the short way round, as membership does.
                    previous = Region.unwrapped(c, toward: previous)
                    box.formUnion(previous)
                }
                Region.appendExpanded(box, metres: r, to: &result)
            }
        }
        return result
    }

    /// Appends `box` grown by `r` metres, split at ±180 as needed.
    static func appendExpanded(_ box: BoundingBox, metres r: Double, to result: inout [BoundingBox]) {
        let dLat = r > 0 ? DistanceMargin.latitudeDegrees(metres: r) : 0
        let minLat = Swift.max(-90, box.minLatitude - dLat)
        let maxLat = Swift.min(90, box.maxLatitude + dLat)
        let reach = Swift.max(Swift.abs(box.minLatitude), Swift.abs(box.maxLatitude)) + dLat
        let dLon: Double? = r > 0 ? DistanceMargin.longitudeDegrees(metres: r, maxAbsLatitude: reach) : 0
        guard let dLon, box.width + 2 * dLon < 360 else {
            result.append(BoundingBox(minLongitude: -180, minLatitude: minLat, maxLongitude: 180, maxLatitude: maxLat))
            return
        }
        var minLon = box.minLongitude - dLon, maxLon = box.maxLongitude + dLon
        let k = ((minLon + 180) / 360).rounded(.down)
        minLon -= 360 * k
        maxLon -= 360 * k
        if maxLon <= 180 {
            result.append(BoundingBox(minLongitude: minLon, minLatitude: minLat, maxLongitude: maxLon, maxLatitude: maxLat))
            if maxLon == 180 {
                result.append(BoundingBox(minLongitude: -180, minLatitude: minLat, maxLongitude: -180, maxLatitude: maxLat))
            }
            if minLon == -180 {
                result.append(BoundingBox(minLongitude: 180, minLatitude: minLat, maxLongitude: 180, maxLatitude: maxLat))
            }
        } else {
            result.append(BoundingBox(minLongitude: minLon, minLatitude: minLat, maxLongitude: 180, maxLatitude: maxLat))
            result.append(BoundingBox(minLongitude: -180, minLatitude: minLat, maxLongitude: maxLon - 360, maxLatitude: maxLat))
        }
    }
}
