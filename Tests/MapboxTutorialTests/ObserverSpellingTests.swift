import Foundation
import PerimeterTestSupport
import Testing

/// A Mapbox observer ported with a method name or label slightly wrong must be a compile error, not a
/// class that compiles and is never called. The observer protocols have no default implementations, so
/// this holds by construction; these tests keep it so by type-checking small programs against the built
/// `PerimeterService` module with the toolchain's `swiftc`, exactly as a user's app would be compiled.
@Suite("Observer methods: a misspelt one does not compile")
struct ObserverSpellingTests {
    /// The folder holding the built `PerimeterService.swiftmodule`, found beside the test bundle.
    static let modules: URL? = BuildProducts.locate("Modules") {
        FileManager.default.fileExists(atPath: $0.appendingPathComponent("PerimeterService.swiftmodule").path)
    }

    /// The first `swiftc` on `PATH`: the toolchain `swift test` runs from.
    static let swiftc: URL? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent("swiftc") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// The Mapbox tutorial's observer, with the labels Mapbox uses; `methods` replaces its body.
    static func observer(_ methods: [String], extended: Bool = false) -> String {
        """
        import PerimeterService
        import PerimeterEngine
        final class TutorialObserver: \(extended ? "ExtendedGeofencingObserver" : "GeofencingObserver") {
        \(methods.map { "    \($0) {}" }.joined(separator: "\n"))
        }
        """
    }

    static let mapboxMethods = [
        "func onEntry(event: GeofencingEvent)",
        "func onDwell(event: GeofencingEvent)",
        "func onExit(event: GeofencingEvent)",
        "func onError(error: GeofencingError)",
        "func onUserConsentChanged(isConsentGiven: Bool)",
    ]
    static let extendedMethods = mapboxMethods + [
        "func onCross(event: GeofencingEvent)",
        "func onInside(event: GeofencingEvent)",
        "func onUserConsentChanged(device: DeviceID, isConsentGiven: Bool)",
    ]

    /// Type-checks `source` against the built modules; the exit status and the diagnostics.
    static func typecheck(_ source: String) throws -> (status: Int32, diagnostics: String) {
        let modules = try #require(modules, "the built modules were not found beside the test bundle")
        let swiftc = try #require(swiftc, "swiftc is not on PATH")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("observer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("Observer.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = swiftc
        process.arguments = ["-typecheck", "-I", modules.path, file.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let diagnostics = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, diagnostics)
    }

    @Test("the tutorial's observer, spelt as Mapbox spells it, compiles (the control for the tests below)",
          arguments: [false, true])
    func correctSpellingCompiles(extended: Bool) throws {
        let result = try Self.typecheck(Self.observer(extended ? Self.extendedMethods : Self.mapboxMethods, extended: extended))
        #expect(result.status == 0, "\(result.diagnostics)")
    }

    @Test("a misspelt or mislabelled observer method is a compile error naming the requirement",
          arguments: [
            ("func onDwell(event: GeofencingEvent)", "func onDwel(event: GeofencingEvent)", "onDwell(event:)"),
            ("func onEntry(event: GeofencingEvent)", "func onEntry(_ event: GeofencingEvent)", "onEntry(event:)"),
            ("func onExit(event: GeofencingEvent)", "func onExit(event: Any)", "onExit(event:)"),
            ("func onError(error: GeofencingError)", "func onError(_ error: Error)", "onError(error:)"),
            ("func onUserConsentChanged(isConsentGiven: Bool)", "func onUserConsentChanged(consent: Bool)",
             "onUserConsentChanged(isConsentGiven:)"),
          ])
    func misspeltMethodDoesNotCompile(correct: String, misspelt: String, requirement: String) throws {
        let methods = Self.mapboxMethods.map { $0 == correct ? misspelt : $0 }
        #expect(methods != Self.mapboxMethods)
        let result = try Self.typecheck(Self.observer(methods))
        #expect(result.status != 0)
        // "does not conform to protocol …" for a new name, "… has different argument labels from those
        // required by protocol …" for new labels: either way an error that names the requirement.
        #expect(result.diagnostics.contains("error:"), "\(result.diagnostics)")
        #expect(result.diagnostics.contains("protocol 'GeofencingObserver'"), "\(result.diagnostics)")
        #expect(result.diagnostics.contains(requirement), "\(result.diagnostics)")
    }

    @Test("the extended observer's own methods are requirements too")
    func misspeltExtendedMethodDoesNotCompile() throws {
        let methods = Self.extendedMethods.map { $0 == "func onCross(event: GeofencingEvent)" ? "func onCrossing(event: GeofencingEvent)" : $0 }
        let result = try Self.typecheck(Self.observer(methods, extended: true))
        #expect(result.status != 0)
        #expect(result.diagnostics.contains("does not conform to protocol 'ExtendedGeofencingObserver'"), "\(result.diagnostics)")
        #expect(result.diagnostics.contains("onCross(event:)"), "\(result.diagnostics)")
    }
}
