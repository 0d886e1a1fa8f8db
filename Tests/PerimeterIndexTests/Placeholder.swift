import Testing

@Test func placeholder_PerimeterIndexTests() { #expect(Bool(true)) }
