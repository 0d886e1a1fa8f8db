import PerimeterGeometry

/// Distance-based shapes: circles, corridors and polygon buffers. Cells surely inside become full
/// entries, cells possibly reached become exact entries, the rest get nothing.
extension IndexBuilder {
    /// Adds a circle of `reach` metres (radius plus buffer).
    mutating func addCircle(center: Coordinate, reach: Double, region: Int32) {
        let boxes = Self.reachBoxes(minX: center.longitude, minY: center.latitude, maxX: center.longitude,
                                    maxY: center.latitude, metres: reach)
        var keys: [UInt64] = []
        swap(&keys, &cellKeys)
        keys.removeAll(keepingCapacity: true)
        let grid = self.grid
        for box in boxes {
            forEachCell(in: box) { cell, column, row in
                let cellCenter = Coordinate(latitude: grid.centerY(row), longitude: grid.centerX(column))
                guard let radius = GeodesicBounds.cellRadius(minY: grid.minY(row), maxY: grid.minY(row + 1),
                                                             side: grid.side) else {
                    keys.append(UInt64(cell) << 1)
                    return
                }
                let d = Geodesic.wgs84.distance(from: center, to: cellCenter)
                if GeodesicBounds.certainlyWithin(distance: d, radius: radius, limit: reach) {
                    keys.append(UInt64(cell) << 1 | 1)
                } else if !GeodesicBounds.certainlyBeyond(distance: d, radius: radius, limit: reach) {
                    keys.append(UInt64(cell) << 1)
                }
            }
        }
        swap(&keys, &cellKeys)
        emitCollected(region: region)
    }

    /// Adds a corridor of `reach` metres (radius plus buffer) around the segments of `lines`.
    mutating func addCorridor(lines: [[Coordinate]], reach: Double, region: Int32) {
        cellKeys.removeAll(keepingCapacity: true)
        for line in lines {
            if line.count == 1 {
                collectCells(near: line[0], line[0], metres: reach, certifyFull: true)
            } else {
                // Corridor segments go the short way round, as `Region.contains` takes them.
                for k in 1..<line.count {
                    let a = line[k - 1], b = line[k]
                    let near = Coordinate(latitude: b.latitude,
                                          longitude: b.longitude + 360 * ((a.longitude - b.longitude) / 360).rounded())
                    collectCells(near: a, near, metres: reach, certifyFull: true)
                }
            }
        }
        emitCollected(region: region)
    }

    /// Adds exact entries for the cells within `buffer` metres of the polygons' edges.
    mutating func addBufferZone(_ polygons: [Polygon], buffer: Double, region: Int32) {
        cellKeys.removeAll(keepingCapacity: true)
        for polygon in polygons {
            collectEdges(of: polygon)
            for e in polygonEdges {
                collectCells(near: Coordinate(latitude: e.ay, longitude: e.ax),
                             Coordinate(latitude: e.by, longitude: e.bx), metres: buffer, certifyFull: false)
            }
        }
        emitCollected(region: region)
    }

    /// Appends to `cellKeys` the cells that may hold points within `metres` of the lon/lat segment
    /// a–b, flagged full when every point of the cell is surely that close (only if `certifyFull`).
    mutating func collectCells(near a: Coordinate, _ b: Coordinate, metres: Double, certifyFull: Bool) {
        let minX = min(a.longitude, b.longitude), maxX = max(a.longitude, b.longitude)
        let minY = min(a.latitude, b.latitude), maxY = max(a.latitude, b.latitude)
        let reach = GeodesicBounds.reach(metres: metres, latLo: minY, latHi: maxY)
        let boxes = Self.reachBoxes(minX: minX, minY: minY, maxX: maxX, maxY: maxY, metres: metres)
        let lengthBound = (maxY - minY) * GeodesicBounds.maxMetresPerDegreeLatitude
            + (maxX - minX) * GeodesicBounds.maxMetresPerDegreeLongitude
        let mayCertify = certifyFull && lengthBound <= GeodesicBounds.maxCertifiedSegmentMetres
        var keys: [UInt64] = []
        swap(&keys, &cellKeys)
        let grid = self.grid
        for box in boxes {
            forEachCell(in: box) { cell, column, row in
                if let dLon = reach.longitude {
                    // Prune cells whose rectangle, grown by the reach, misses the segment.
                    let x0 = grid.minX(column) + box.shift - dLon, x1 = grid.minX(column + 1) + box.shift + dLon
                    let y0 = grid.minY(row) - reach.latitude, y1 = grid.minY(row + 1) + reach.latitude
                    if !Self.segmentMayMeet(a, b, x0: x0, y0: y0, x1: x1, y1: y1) { return }
                }
                var full = false
                if mayCertify, let radius = GeodesicBounds.cellRadius(minY: grid.minY(row), maxY: grid.minY(row + 1),
                                                                      side: grid.side), radius < metres {
                    let cellCenter = Coordinate(latitude: grid.centerY(row), longitude: grid.centerX(column))
                    let d = Geodesic.wgs84.distance(from: cellCenter, toSegment: a, b)
                    full = GeodesicBounds.certainlyWithin(distance: d, radius: radius, limit: metres)
                }
                keys.append(UInt64(cell) << 1 | (full ? 1 : 0))
            }
        }
        swap(&keys, &cellKeys)
    }

    /// Conservative segment/rectangle test: `false` only when the segment surely misses the
    /// rectangle (the rectangles it is used with are padded far beyond rounding error).
    static func segmentMayMeet(_ a: Coordinate, _ b: Coordinate, x0: Double, y0: Double, x1: Double, y1: Double) -> Bool {
        let ax = a.longitude, ay = a.latitude, bx = b.longitude, by = b.latitude
        if max(ax, bx) < x0 || min(ax, bx) > x1 || max(ay, by) < y0 || min(ay, by) > y1 { return false }
        let dx = bx - ax, dy = by - ay
        let s0 = dx * (y0 - ay) - dy * (x0 - ax), s1 = dx * (y0 - ay) - dy * (x1 - ax)
        let s2 = dx * (y1 - ay) - dy * (x0 - ax), s3 = dx * (y1 - ay) - dy * (x1 - ax)
        if s0 > 0 && s1 > 0 && s2 > 0 && s3 > 0 { return false }
        if s0 < 0 && s1 < 0 && s2 < 0 && s3 < 0 { return false }
        return true
    }

    /// Emits one entry per distinct cell of `cellKeys`: full if any key says so, else exact.
    mutating func emitCollected(region: Int32) {
        var keys: [UInt64] = []
        swap(&keys, &cellKeys)
        keys.sort()
        var i = 0
        while i < keys.count {
            let cell = Int(keys[i] >> 1)
            var full = false
            while i < keys.count, Int(keys[i] >> 1) == cell {
                full = full || keys[i] & 1 != 0
                i += 1
            }
            if full { emitFull(cell: cell, region: region) } else { emitExact(cell: cell, region: region) }
        }
        keys.removeAll(keepingCapacity: true)
        swap(&keys, &cellKeys)
    }

    /// Emits exact entries for the cells collected in `cellKeys`.
    mutating func emitCollectedExact(region: Int32) {
        for k in cellKeys.indices { cellKeys[k] &= ~1 }
        emitCollected(region: region)
    }
}
