import Testing

@Test func placeholder_PerimeterCLITests() { #expect(Bool(true)) }
