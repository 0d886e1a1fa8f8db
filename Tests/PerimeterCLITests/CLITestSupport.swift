import Foundation
import PerimeterCLI

/// Collects what a command writes.
final class Capture: @unchecked Sendable {
    private let lock = NSLock()
    private var outText = ""
    private var errText = ""

    var output: String { lock.withLock { outText } }
    var error: String { lock.withLock { errText } }

    var console: Console {
        Console(output: { text in self.lock.withLock { self.outText += text } },
                error: { text in self.lock.withLock { self.errText += text } })
    }
}

/// Runs `perimeter` in-process with `arguments`; returns the exit status and what it wrote.
func perimeter(_ arguments: String...) -> (status: Int32, output: String, error: String) {
    perimeter(arguments)
}

func perimeter(_ arguments: [String]) -> (status: Int32, output: String, error: String) {
    let capture = Capture()
    let status = Perimeter.main(arguments, console: capture.console)
    return (status, capture.output, capture.error)
}

/// A fresh temporary directory.
func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("perimeter-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Writes `text` into a file in `directory`; returns its path.
@discardableResult
func write(_ text: String, to name: String, in directory: URL) throws -> String {
    let url = directory.appendingPathComponent(name)
    try Data(text.utf8).write(to: url)
    return url.path
}

/// The built `perimeter` executable next to the test bundle.
func perimeterExecutable() -> URL? {
    var folder = Bundle.main.bundleURL
    for _ in 0..<3 {
        let candidate = folder.appendingPathComponent("perimeter")
        if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        folder.deleteLastPathComponent()
    }
    return nil
}

/// The (type, fenceId, deviceId, time) of each NDJSON event line.
func eventKeys(_ ndjson: String) throws -> [[String]] {
    try ndjson.split(separator: "\n").map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] ?? [:]
        return ["type", "fenceId", "deviceId", "time"].map { object[$0] as? String ?? "<missing \($0)>" }
    }
}
