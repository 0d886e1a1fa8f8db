/// The RFC 7946 GeoJSON model.
///
/// The types are nested in this namespace (`GeoJSON.Point`, `GeoJSON.Polygon`, …) so they never clash with the
/// planar types of `PerimeterGeometry` when both modules are imported.
public enum GeoJSON {}
