import Testing

@Test func placeholder_PerimeterGeometryTests() { #expect(Bool(true)) }
