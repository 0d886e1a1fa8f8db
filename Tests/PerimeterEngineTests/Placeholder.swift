import Testing

@Test func placeholder_PerimeterEngineTests() { #expect(Bool(true)) }
