import Testing

@Test func placeholder_PerimeterTracksTests() { #expect(Bool(true)) }
