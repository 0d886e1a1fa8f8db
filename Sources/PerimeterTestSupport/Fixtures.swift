import Foundation

/// Locates the shared reference fixtures (`../shared/fixtures` beside the repository).
///
/// Tests that need them are enabled only when they are present, so `make test` also runs on a
/// checkout without `../shared`. Set `PERIMETER_FIXTURES` to point elsewhere.
public enum Fixtures {
    /// The fixtures folder, or `nil` when it is not there.
    public static let root: URL? = {
        if let path = ProcessInfo.processInfo.environment["PERIMETER_FIXTURES"], !path.isEmpty {
            return FileManager.default.fileExists(atPath: path) ? URL(fileURLWithPath: path, isDirectory: true) : nil
        }
        // This file is <repo>/Sources/PerimeterTestSupport/Fixtures.swift; the fixtures are <repo>/../shared/fixtures.
        let repository = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let candidate = repository.deletingLastPathComponent()
            .appendingPathComponent("shared", isDirectory: true)
            .appendingPathComponent("fixtures", isDirectory: true)
        return FileManager.default.fileExists(atPath: candidate.path) ? candidate : nil
    }()

    /// Whether the shared fixtures are available.
    public static var available: Bool { root != nil }

    /// The URL of a fixture given its path below the fixtures folder.
    public static func url(_ relativePath: String) -> URL {
        (root ?? URL(fileURLWithPath: "/nonexistent")).appendingPathComponent(relativePath)
    }

    /// The bytes of a fixture file.
    public static func data(_ relativePath: String) throws -> Data {
        try Data(contentsOf: url(relativePath))
    }

    /// The repository's root folder (for tests that read files the project ships).
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}
