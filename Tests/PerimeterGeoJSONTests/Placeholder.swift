import Testing

@Test func placeholder_PerimeterGeoJSONTests() { #expect(Bool(true)) }
