/// The GeoJSON property keys that configure a fence (docs/fences.md).
///
/// Mapbox's two keys work as Mapbox documents them; Perimeter's own keys live under the `perimeter:`
/// prefix so they never collide with a user's properties.
public enum FenceProperties {
    /// Mapbox: dwell time in **minutes** (a number).
    public static let mapboxDwellTime = "MBX_GEOFENCE_DWELL_TIME"
    /// Mapbox: radius of a Point fence in **metres** (a number).
    public static let mapboxPointRadius = "MBX_GEOFENCE_POINT_RADIUS"
    /// Dwell time in **seconds**; takes precedence over ``mapboxDwellTime``.
    public static let dwell = "perimeter:dwell"
    /// Radius in metres: of a Point (circle) or MultiPoint fence, or the half-width of a corridor
    /// (LineString, MultiLineString); takes precedence over ``mapboxPointRadius``.
    public static let radius = "perimeter:radius"
    /// Buffer in metres around any fence: within it of the boundary counts as inside.
    public static let buffer = "perimeter:buffer"
    /// The events the fence emits: an array of `"entry"`, `"dwell"`, `"exit"` (or one comma-separated string).
    public static let events = "perimeter:events"
    /// The fence's group (a string).
    public static let group = "perimeter:group"
    /// A message template such as `"Entered {name}"`.
    public static let message = "perimeter:message"
    /// When the fence stops reporting: an RFC 3339 timestamp or seconds since 1970.
    public static let expires = "perimeter:expires"
    /// The fence's human name.
    public static let name = "name"

    /// Whether `key` can configure a fence: every key above and in `DetectionOptions+Properties.swift` is
    /// `perimeter:`-prefixed or one of ``mapboxDwellTime``, ``mapboxPointRadius`` and ``name`` (a new key
    /// must be too). A feature whose properties hold no such key has every setting at its default, which
    /// the loader then gives it without looking each key up.
    public static func isSetting(_ key: String) -> Bool {
        key.hasPrefix("perimeter:") || key == name || key == mapboxDwellTime || key == mapboxPointRadius
    }
}
