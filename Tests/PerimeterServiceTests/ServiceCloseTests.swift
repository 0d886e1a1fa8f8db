import PerimeterService
import Testing

@Suite("Closing the service")
struct ServiceCloseTests {
    @Test("close() with a live event stream ends the stream and does not deadlock")
    func closeEndsStreams() async throws {
        let service = GeofencingService()
        try service.configure(GeofencingOptions())
        let stream = service.events()
        let consumer = Task {
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        try service.close()
        #expect(await consumer.value == 0)
        // The service can be configured again after closing.
        try service.configure(GeofencingOptions())
    }
}
