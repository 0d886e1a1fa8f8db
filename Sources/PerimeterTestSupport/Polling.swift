import Foundation

/// Checks `condition` every millisecond until it holds or `seconds` have passed, for tests that wait on
/// another thread (never on Swift's cooperative pool for long).
/// - Returns: whether the condition held in time.
public func waitUntil(seconds: Double = 10, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(1_000)
    }
    return condition()
}
