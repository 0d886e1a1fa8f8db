import PerimeterFences
@testable import PerimeterService
import Testing

/// The in-memory store keeps a fence's text, not the import body it was sliced from.
@Suite("In-memory store: feature texts")
struct InMemoryStoreTextTests {
    @Test func aTextGivenAsASliceIsKeptAsItsOwnString() throws {
        let text = #"{"type":"Feature","id":"a","geometry":null}"#
        let body = Array(("[" + text + "," + String(repeating: " ", count: 10_000) + "]").utf8)
        let store = InMemoryGeofencingStore()
        var changes = StoreChanges()
        changes.fences = [.upsert(StoredFence(id: "a", position: 1, featureUTF8: body[1..<(1 + text.utf8.count)]))]
        try store.commit(changes)
        let loaded = try #require(try store.load().fences.first)
        #expect(loaded.feature == text)
        // Kept as a slice, the fence would hold the whole 10 kB body (a real import's is tens of megabytes).
        guard case .string = loaded.featureText else {
            Issue.record("the store kept the slice of the body: \(loaded.featureText)")
            return
        }
    }
}
