/// A longitude/latitude box reduced to the −180…180 band, with the shift that maps it back.
struct WrappedBox: Sendable {
    var minX: Double
    var minY: Double
    var maxX: Double
    var maxY: Double
    /// Add this to a longitude inside the box to get back to the unwrapped frame it came from.
    var shift: Double
}

enum LongitudeWrap {
    /// Splits the box `minX…maxX × minY…maxY` (which may reach past ±180) into boxes within
    /// −180…180, each with the shift back to the original frame; a box 360° wide or more gives the
    /// whole band.
    static func boxes(minX: Double, minY: Double, maxX: Double, maxY: Double) -> [WrappedBox] {
        if maxX - minX >= 360 {
            return [WrappedBox(minX: -180, minY: minY, maxX: 180, maxY: maxY, shift: 0)]
        }
        var result: [WrappedBox] = []
        if minX < -180 {
            result.append(WrappedBox(minX: minX + 360, minY: minY, maxX: 180, maxY: maxY, shift: -360))
            result.append(WrappedBox(minX: -180, minY: minY, maxX: maxX, maxY: maxY, shift: 0))
        } else if maxX > 180 {
            result.append(WrappedBox(minX: minX, minY: minY, maxX: 180, maxY: maxY, shift: 0))
            result.append(WrappedBox(minX: -180, minY: minY, maxX: maxX - 360, maxY: maxY, shift: 360))
        } else {
            result.append(WrappedBox(minX: minX, minY: minY, maxX: maxX, maxY: maxY, shift: 0))
        }
        return result
    }
}
