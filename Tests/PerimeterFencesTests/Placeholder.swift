import Testing

@Test func placeholder_PerimeterFencesTests() { #expect(Bool(true)) }
