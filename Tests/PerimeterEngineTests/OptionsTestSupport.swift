import Foundation
import PerimeterEngine
import PerimeterFences
import PerimeterGeometry

/// `fence` with `options`.
func with(_ fence: Fence, _ options: DetectionOptions) -> Fence {
    var copy = fence
    copy.options = options
    return copy
}

/// An update of device `d` with a horizontal accuracy in metres.
func update(_ t: Double, _ lat: Double, _ lon: Double, accuracy: Double?) -> LocationUpdate {
    LocationUpdate(device: "d", time: Date(timeIntervalSince1970: t), latitude: lat, longitude: lon,
                   horizontalAccuracy: accuracy)
}

/// Degrees of longitude for `metres` on the equator (WGS84 equatorial radius).
func degrees(metres: Double) -> Double { metres / (6_378_137 * Double.pi / 180) }

/// Seconds since 1970 of a time on Monday 1970-01-05 (a Monday), given hours and minutes (UTC).
func monday(_ hours: Double, _ minutes: Double = 0, week: Double = 0) -> Double {
    345_600 + hours * 3600 + minutes * 60 + week * 604_800
}
